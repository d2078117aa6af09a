"""Gradients: kiln.grad and kiln.value_and_grad over kiln_computation_vjp and
kiln_computation_value_and_grad, checked against derivatives worked out by hand."""

import numpy as np
import pytest

import kiln


def add_f32() -> kiln.Computation:
    with kiln.Builder("add") as b:
        return b.build(b.parameter(0, "f32", [], "a") + b.parameter(1, "f32", [], "b"))


def squared_error() -> kiln.Computation:
    # loss(w: f32[3,2], x: f32[4,3], y: f32[4,2], n: s32[]) = sum((x @ w - y)^2)
    with add_f32() as add, kiln.Builder("squared_error") as b:
        w = b.parameter(0, "f32", [3, 2], "w")
        x = b.parameter(1, "f32", [4, 3], "x")
        y = b.parameter(2, "f32", [4, 2], "y")
        b.parameter(3, "s32", [], "n")
        error = x @ w - y
        return b.build(b.reduce(error * error, b.constant_f32(0.0), add, [0, 1]))


RNG = np.random.default_rng(7)
W = RNG.standard_normal((3, 2)).astype(np.float32)
X = RNG.standard_normal((4, 3)).astype(np.float32)
Y = RNG.standard_normal((4, 2)).astype(np.float32)
N = np.int32(3)


def test_value_and_grad_of_a_loss(client):
    with squared_error() as loss, kiln.value_and_grad(loss, wrt=[0, 1]) as gradient:
        assert gradient.parameter_count == 4
        with client.compile(gradient) as exe:
            value, dw, dx = exe(W, X, Y, N)
    error = X @ W - Y
    np.testing.assert_allclose(value, np.sum(error * error), rtol=1e-5)
    np.testing.assert_allclose(dw, 2 * X.T @ error, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx, 2 * error @ W.T, rtol=1e-5, atol=1e-5)


def test_method_form_and_one_number(client):
    with squared_error() as loss, loss.value_and_grad(0) as gradient, client.compile(gradient) as exe:
        value, dw = exe(W, X, Y, N)
    np.testing.assert_allclose(dw, 2 * X.T @ (X @ W - Y), rtol=1e-5, atol=1e-5)
    assert value.shape == ()


def test_grad_of_a_vector_function_takes_a_cotangent(client):
    with kiln.Builder("tanh") as b:
        f = b.build(b.tanh(b.parameter(0, "f32", [5], "x")))
    x = np.linspace(-2, 2, 5, dtype=np.float32)
    cotangent = np.arange(5, dtype=np.float32)
    with f, kiln.grad(f, 0) as vjp, client.compile(vjp) as exe:
        assert vjp.parameter_count == 2
        y, dx = exe(x, cotangent)
    np.testing.assert_allclose(y, np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(dx, cotangent * (1 - np.tanh(x) ** 2), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("wrt", "code", "needle"),
    [
        (7, kiln.StatusCode.INVALID_ARGUMENT, "parameter 7"),
        ([0, 2, 0], kiln.StatusCode.INVALID_ARGUMENT, "repeats parameter 0"),
        (3, kiln.StatusCode.INVALID_ARGUMENT, "s32"),
        ([], kiln.StatusCode.INVALID_ARGUMENT, "wrt is empty"),
    ],
)
def test_bad_parameter_numbers(wrt, code, needle):
    with squared_error() as loss:
        with pytest.raises(kiln.KilnError) as error:
            kiln.value_and_grad(loss, wrt)
    assert error.value.code == code
    assert needle in str(error.value) and "kiln_computation_value_and_grad" in str(error.value)


def test_map_is_differentiated_through_its_body(client):
    with add_f32() as add, kiln.Builder("mapped") as b:
        x = b.parameter(0, "f32", [4], "x")
        mapped_sum = b.build(b.reduce(b.map([x, x], add, [0]), b.constant_f32(0.0), add, [0]))
    values = np.array([0.5, -1.0, 2.0, 3.0], dtype=np.float32)
    with mapped_sum, kiln.value_and_grad(mapped_sum, 0) as gradient, client.compile(gradient) as exe:
        value, dx = exe(values)
    np.testing.assert_allclose(value, 2 * values.sum(), rtol=1e-6)
    np.testing.assert_allclose(dx, np.full(4, 2.0, dtype=np.float32))


def test_refusals_name_the_op_and_the_shape():
    # A custom call with no gradient registered has no derivative.
    with kiln.Builder("opaque") as b:
        x = b.parameter(0, "f32", [], "x")
        opaque = b.build(b.custom_call("kiln_test_no_gradient", [x], "f32", []))
    with opaque, pytest.raises(kiln.KilnError) as error:
        kiln.grad(opaque, 0)
    assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT
    assert "'custom-call' is not differentiable" in str(error.value)
    with kiln.Builder("vector") as b:
        vector = b.build(b.parameter(0, "f32", [4], "x") * 2.0)
    with vector, pytest.raises(kiln.KilnError) as error:
        kiln.value_and_grad(vector, 0)
    assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT and "f32[4]" in str(error.value)
