"""(a) A small MLP built with the Builder, checked against a hand computation."""

import numpy as np

import kiln


def build_mlp() -> kiln.Computation:
    # y = relu(x @ w1 + b1) @ w2 + b2 with x: f32[2,3], w1: f32[3,4], w2: f32[4,2].
    with kiln.Builder("mlp") as b:
        x = b.parameter(0, "f32", [2, 3], "x")
        w1 = b.parameter(1, "f32", [3, 4], "w1")
        b1 = b.parameter(2, "f32", [4], "b1")
        w2 = b.parameter(3, "f32", [4, 2], "w2")
        b2 = b.parameter(4, "f32", [2], "b2")
        h = b.add(b.dot(x, w1), b1, broadcast_dimensions=[1])
        h = b.max(h, b.constant_f32(0.0))  # relu
        y = b.add(b.dot(h, w2), b2, broadcast_dimensions=[1])
        assert y.shape == (2, 2) and y.element_type == kiln.ElementType.F32
        return b.build(y)


X = np.array([[1, 2, 3], [-1, 0, 2]], np.float32)
W1 = np.array([[1, 0, -1, 2], [0, 1, 1, -1], [1, 1, 0, 0]], np.float32)
B1 = np.array([0, -4, 1, 0.5], np.float32)
W2 = np.array([[1, -1], [2, 0], [0, 1], [1, 1]], np.float32)
B2 = np.array([0.5, -0.5], np.float32)


def test_mlp_matches_hand_computation(client):
    # x @ w1 = [[4, 5, 1, 0], [1, 2, 1, -2]]; + b1 = [[4, 1, 2, 0.5], [1, -2, 2, -1.5]]
    # relu = [[4, 1, 2, 0.5], [1, 0, 2, 0]]
    # @ w2 = [[4+2+0+0.5, -4+0+2+0.5], [1+0+0+0, -1+0+2+0]] = [[6.5, -1.5], [1, 1]]
    # + b2 = [[7, -2], [1.5, 0.5]]
    expected = np.array([[7.0, -2.0], [1.5, 0.5]], np.float32)
    with build_mlp() as computation, client.compile(computation) as exe:
        assert computation.parameter_count == 5
        assert exe.parameter_count == 5 and exe.result_count == 1
        assert exe.parameter_type(0) == kiln.ElementType.F32
        y = exe(X, W1, B1, W2, B2)
    assert y.dtype == np.float32 and y.shape == (2, 2)
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-6)
    np.testing.assert_allclose(y, np.maximum(X @ W1 + B1, 0) @ W2 + B2, rtol=1e-6)


def test_mlp_with_device_buffers_and_operators(client):
    with kiln.Builder("mlp_ops") as b:
        x = b.parameter(0, np.float32, [2, 3])
        w1 = b.parameter(1, np.float32, [3, 4])
        b1 = b.parameter(2, np.float32, [4])
        w2 = b.parameter(3, np.float32, [4, 2])
        b2 = b.parameter(4, np.float32, [2])
        h = b.max(b.add(x @ w1, b1, [1]), b.constant(np.float32(0)))
        computation = b.build(b.add(h @ w2, b2, [1]) * 2.0 - 1.0)
    with computation, client.compile(computation) as exe:
        args = [client.buffer(a) for a in (X, W1, B1, W2, B2)]
        (result,) = exe.execute(args)
        with result:
            assert result.shape == (2, 2) and result.dtype == np.float32
            assert repr(result) == "<kiln.Buffer f32[2,2]>"
            np.testing.assert_allclose(np.asarray(result), [[13, -5], [2, 0]], atol=1e-6)
        for a in args:
            a.close()


def test_hlo_text_round_trip(client):
    with build_mlp() as computation:
        text = computation.to_hlo_text()
    assert "ENTRY" in text and "maximum" in text
    with kiln.Computation.from_hlo_text(text) as again, client.compile(again) as exe:
        np.testing.assert_allclose(exe(X, W1, B1, W2, B2), [[7, -2], [1.5, 0.5]], atol=1e-6)
