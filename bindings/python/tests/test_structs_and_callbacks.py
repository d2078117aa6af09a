"""Dimension-number structs and custom-call callbacks are marshalled correctly."""

import ctypes

import numpy as np
import pytest

import kiln


def test_dot_general_gather_and_conv(client):
    with kiln.Builder("structs") as b:
        lhs = b.parameter(0, "f32", [2, 3, 4])
        rhs = b.parameter(1, "f32", [2, 4, 5])
        batched = b.dot_general(lhs, rhs, kiln.DotDimensionNumbers([2], [1], [0], [0]))
        assert batched.shape == (2, 3, 5)
        table = b.parameter(2, "f32", [5, 3])
        indices = b.constant(np.array([[4], [0]], np.int32))
        rows = b.gather(
            table,
            indices,
            kiln.GatherDimensionNumbers(
                offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0], index_vector_dim=1
            ),
            slice_sizes=[1, 3],
        )
        image = b.parameter(3, "f32", [1, 1, 4, 4])
        kernel = b.constant(np.ones((1, 1, 2, 2), np.float32))
        conv = b.conv_general_dilated(image, kernel, [1, 1], [0, 0], [0, 0], kiln.ConvDimensionNumbers())
        computation = b.build(b.tuple([batched, rows, conv]))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    c = rng.standard_normal((2, 4, 5)).astype(np.float32)
    t = np.arange(15, dtype=np.float32).reshape(5, 3)
    img = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    with computation, client.compile(computation) as exe:
        got_dot, got_rows, got_conv = exe(a, c, t, img)
    np.testing.assert_allclose(got_dot, a @ c, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got_rows, t[[4, 0]])
    want = img[0, 0, :-1, :-1] + img[0, 0, 1:, :-1] + img[0, 0, :-1, 1:] + img[0, 0, 1:, 1:]
    np.testing.assert_allclose(got_conv[0, 0], want)


def _double(out, inputs):
    src = ctypes.cast(inputs[0], ctypes.POINTER(ctypes.c_float))
    dst = ctypes.cast(out, ctypes.POINTER(ctypes.c_float))
    for i in range(4):
        dst[i] = src[i] * 2


def test_custom_call(client):
    kiln.register_custom_call("python_test_double", _double)
    kiln.register_custom_call("python_test_double", _double)  # the same function again is fine
    with pytest.raises(kiln.KilnError) as info:
        kiln.register_custom_call("python_test_double", lambda out, inputs: None)
    assert info.value.code == kiln.StatusCode.ALREADY_EXISTS
    with kiln.Builder() as b:
        p = b.parameter(0, "f32", [4])
        computation = b.build(b.custom_call("python_test_double", [p], "f32", [4]))
    with computation, client.compile(computation) as exe:
        np.testing.assert_array_equal(exe(np.arange(4, dtype=np.float32)), [0, 2, 4, 6])


def test_operand_precision(client):
    with kiln.Builder("precision") as b:
        lhs = b.parameter(0, "f32", [2, 3])
        rhs = b.parameter(1, "f32", [3, 4])
        product = b.set_precision(b.dot(lhs, rhs), "highest", kiln.Precision.DEFAULT)
        computation = b.build(product)
    with computation:
        assert "operand_precision={highest,default}" in computation.to_hlo_text()
        rng = np.random.default_rng(2)
        a = rng.standard_normal((2, 3)).astype(np.float32)
        c = rng.standard_normal((3, 4)).astype(np.float32)
        with client.compile(computation) as exe:
            got = exe(a, c)
    np.testing.assert_allclose(got, a @ c, rtol=1e-5, atol=1e-5)
    with kiln.Builder("precision_of_an_add") as b:
        x = b.parameter(0, "f32", [2])
        with pytest.raises(kiln.KilnError, match="only dot and convolution"):
            b.set_precision(x + x, "high", "high")
