"""Forward mode: kiln.jvp over kiln_computation_jvp, checked against
derivatives worked out by hand, and its refusals."""

import numpy as np
import pytest

import kiln


def sine_times() -> kiln.Computation:
    # f(w: f32[3], x: f32[3], n: s32[]) = (sin(w) * x, n)
    with kiln.Builder("sine_times") as b:
        w = b.parameter(0, "f32", [3], "w")
        x = b.parameter(1, "f32", [3], "x")
        n = b.parameter(2, "s32", [], "n")
        return b.build(b.tuple([b.sin(w) * x, n]))


W = np.array([1.0, -2.0, 0.5], dtype=np.float32)
X = np.array([3.0, 0.25, -4.0], dtype=np.float32)
DW = np.array([0.5, 1.0, -1.5], dtype=np.float32)
DX = np.array([2.0, -1.0, 0.125], dtype=np.float32)
N = np.int32(7)


def test_jvp_returns_results_then_their_tangents(client):
    # wrt [1, 0]: the tangent of x comes first, then w's.
    with sine_times() as f, kiln.jvp(f, [1, 0]) as jvp, client.compile(jvp) as exe:
        assert jvp.parameter_count == 5
        y, n, dy, dn = exe(W, X, N, DX, DW)
    np.testing.assert_allclose(y, np.sin(W) * X, rtol=1e-6)
    assert n == N
    np.testing.assert_allclose(dy, np.cos(W) * DW * X + np.sin(W) * DX, rtol=1e-5, atol=1e-6)
    assert dn == 0  # an integer result has no tangent


def test_method_form_and_one_number(client):
    with sine_times() as f, f.jvp(0) as jvp, client.compile(jvp) as exe:
        _, _, dy, _ = exe(W, X, N, DW)
    np.testing.assert_allclose(dy, np.cos(W) * DW * X, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("wrt", "code", "needle"),
    [
        (7, kiln.StatusCode.INVALID_ARGUMENT, "parameter 7"),
        ([0, 0], kiln.StatusCode.INVALID_ARGUMENT, "repeats parameter 0"),
        (2, kiln.StatusCode.INVALID_ARGUMENT, "s32"),
        ([], kiln.StatusCode.INVALID_ARGUMENT, "wrt is empty"),
    ],
)
def test_bad_parameter_numbers(wrt, code, needle):
    with sine_times() as f:
        with pytest.raises(kiln.KilnError) as error:
            kiln.jvp(f, wrt)
    assert error.value.code == code
    assert needle in str(error.value) and "kiln_computation_jvp" in str(error.value)
