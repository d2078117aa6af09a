"""User-defined ops from Python: the seed's ZeroOut, constraints and errors."""

import numpy as np
import pytest

import kiln

X = np.array([5, 4, 3, 2, 1], dtype=np.int32)


def zero_out(frame):
    keep = frame.attrs.get("preserve_index", 0)
    for x, out in zip(frame.args, frame.results):
        if keep >= x.shape[0]:
            raise IndexError(f"preserve_index out of range: {keep}")
        out[...] = 0
        out[keep] = x[keep]


@pytest.fixture(scope="module", autouse=True)
def ops():
    kiln.register_op("PyZeroOut", inputs=["to_zero: int32"], outputs=["zeroed: int32"], doc="ZeroOut")
    kiln.register_kernel("PyZeroOut", zero_out, dtype="s32")
    kiln.register_op(
        "PyZeroOutIndex",
        attrs=["preserve_index: int >= 0 = 0"],
        inputs=["to_zero: int32"],
        outputs=["zeroed: int32"],
    )
    kiln.register_kernel("PyZeroOutIndex", zero_out, dtype=np.int32)
    kiln.register_op(
        "PyZeroOutPoly", attrs=["T: {float, int32}"], inputs=["to_zero: T"], outputs=["zeroed: T"]
    )
    kiln.register_kernel("PyZeroOutPoly", zero_out, dtype=np.int32)
    kiln.register_kernel("PyZeroOutPoly", zero_out, dtype=np.float32, backend="cpu")
    kiln.register_op(
        "PyZeroOutList",
        attrs=["N: int >= 2", "T: {float, int32}"],
        inputs=["to_zero: N * T"],
        outputs=["zeroed: N * T"],
    )
    kiln.register_kernel("PyZeroOutList", zero_out)


def run(backend, op, xs, attrs=None):
    with kiln.Client(backend) as client, kiln.Builder(op) as b:
        params = [b.parameter(i, x.dtype, x.shape) for i, x in enumerate(xs)]
        with b.build(b.call_registered(op, params, attrs)) as computation:
            with client.compile(computation) as executable:
                return executable(*xs)


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_zero_out_versions(backend):
    assert run(backend, "PyZeroOut", [X]).tolist() == [5, 0, 0, 0, 0]
    assert run(backend, "PyZeroOutIndex", [X]).tolist() == [5, 0, 0, 0, 0]
    assert run(backend, "PyZeroOutIndex", [X], {"preserve_index": 3}).tolist() == [0, 0, 0, 2, 0]
    assert run(backend, "PyZeroOutPoly", [X]).tolist() == [5, 0, 0, 0, 0]
    a, b = run(backend, "PyZeroOutList", [X, X * 2])
    assert a.tolist() == [5, 0, 0, 0, 0] and b.tolist() == [10, 0, 0, 0, 0]


def test_float_kernel_only_on_cpu():
    assert run("cpu", "PyZeroOutPoly", [X.astype(np.float32)]).tolist() == [5.0, 0, 0, 0, 0]
    with pytest.raises(kiln.KilnError, match="has no interpreter kernel for element type f32") as error:
        run("interpreter", "PyZeroOutPoly", [X.astype(np.float32)])
    assert error.value.code == kiln.StatusCode.UNIMPLEMENTED


def test_constraint_errors():
    with pytest.raises(kiln.KilnError, match="input 'to_zero' must be s32"):
        run("cpu", "PyZeroOut", [X.astype(np.float32)])
    with pytest.raises(kiln.KilnError, match="attribute 'T' is f64, not one of"):
        run("cpu", "PyZeroOutPoly", [X.astype(np.float64)])
    with pytest.raises(kiln.KilnError, match="fewer than its minimum 2"):
        run("cpu", "PyZeroOutList", [X])
    with pytest.raises(kiln.KilnError, match="'preserve_index' is -1, less than its minimum 0"):
        run("cpu", "PyZeroOutIndex", [X], {"preserve_index": -1})
    with pytest.raises(kiln.KilnError, match="'preserve_index' must be int, got string"):
        run("cpu", "PyZeroOutIndex", [X], {"preserve_index": "3"})
    with pytest.raises(kiln.KilnError, match="already registered") as error:
        kiln.register_op("PyZeroOut", inputs=["to_zero: int32"], outputs=["zeroed: int32"])
    assert error.value.code == kiln.StatusCode.ALREADY_EXISTS


def test_kernel_error_reaches_the_caller():
    with pytest.raises(
        kiln.KilnError, match="kernel failed on host: preserve_index out of range: 7"
    ) as error:
        run("interpreter", "PyZeroOutIndex", [X], {"preserve_index": 7})
    assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT


def test_attributes_and_shape_function_and_hlo_text():
    seen = {}

    def concat_shape(frame):
        total = sum(dims[0] for _, dims in frame.args)
        if total > 100:
            raise ValueError("too long")
        frame.set_result_dims(0, [total])

    def concat(frame):
        seen.update(frame.attrs)
        frame.results[0][...] = np.concatenate(frame.args)

    kiln.register_op(
        "PyConcat",
        attrs=[
            "N: int >= 2",
            "tag: {'a', 'b'} = 'a'",
            "scale: float = 1.0",
            "sh: shape = shape<1,2>",
            "l: list(int) = []",
        ],
        inputs=["x: N * int32"],
        outputs=["y: int32"],
        shape_fn=concat_shape,
    )
    kiln.register_kernel("PyConcat", concat, dtype=np.int32)
    assert run("cpu", "PyConcat", [X, X], {"tag": "b", "l": [1, 2]}).tolist() == [5, 4, 3, 2, 1] * 2
    assert seen == {"N": 2, "tag": "b", "scale": 1.0, "sh": kiln.AttrShape([1, 2]), "l": [1, 2]}
    with pytest.raises(kiln.KilnError, match="PyConcat: shape function: too long"):
        run("cpu", "PyConcat", [np.zeros(60, np.int32)] * 2)
    with pytest.raises(kiln.KilnError, match="not one of"):
        run("cpu", "PyConcat", [X, X], {"tag": "c"})
    with kiln.Builder("hlo") as b:
        p = [b.parameter(i, np.int32, (5,)) for i in range(2)]
        with b.build(b.call_registered("PyConcat", p)) as computation:
            text = computation.to_hlo_text()
    assert 'custom_call_target="PyConcat"' in text and "s32[10]" in text
    with kiln.Computation.from_hlo_text(text) as parsed, kiln.Client("interpreter") as client:
        with client.compile(parsed) as executable:
            assert executable(X, X).tolist() == [5, 4, 3, 2, 1] * 2
    assert "PyZeroOutIndex(to_zero: int32) -> (zeroed: int32)" in kiln.registered_ops()


def _zero_out_grad(frame):
    """The seed's _zero_out_grad: the output cotangent at the preserved index only."""
    b = frame.builder
    keep = frame.attrs.get("preserve_index", 0)
    grads = []
    for x, grad in zip(frame.operands, frame.output_grads):
        at_keep = b.eq(b.iota(np.int64, x.shape, 0), b.constant(np.int64(keep)))
        grads.append(b.select(at_keep, grad, b.constant(np.zeros(x.shape, dtype=x.dtype))))
    return grads


def grad_of(backend, op, attrs=None):
    """d/dx of dot(op(x), w) for x = [1.5, ..., 5.5], w = [1, ..., 5]: (loss, gradient)."""
    x = np.array([1.5, 2.5, 3.5, 4.5, 5.5], dtype=np.float32)
    w = np.arange(1, 6, dtype=np.float32)
    with kiln.Builder("loss") as b:
        p = b.parameter(0, np.float32, (5,))
        loss = b.dot(b.call_registered(op, [p], attrs), b.constant(w))
        with b.build(loss) as computation, computation.value_and_grad(0) as gradient:
            with kiln.Client(backend) as client, client.compile(gradient) as executable:
                value, dx = executable(x)
                return float(value), dx.tolist()


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_gradient(backend):
    for name, grad_fn in [("PyZeroOutGrad", _zero_out_grad), ("PyZeroOutNoGrad", None)]:
        if name not in kiln.registered_ops():
            kiln.register_op(
                name,
                attrs=["preserve_index: int >= 0 = 0"],
                inputs=["to_zero: float"],
                outputs=["zeroed: float"],
                grad_fn=grad_fn,
            )
            kiln.register_kernel(name, zero_out, dtype=np.float32)
    assert grad_of(backend, "PyZeroOutGrad") == (1.5, [1.0, 0.0, 0.0, 0.0, 0.0])
    assert grad_of(backend, "PyZeroOutGrad", {"preserve_index": 3}) == (18.0, [0.0, 0.0, 0.0, 4.0, 0.0])
    with pytest.raises(kiln.KilnError, match="op 'PyZeroOutNoGrad' .* has no gradient registered") as e:
        grad_of(backend, "PyZeroOutNoGrad")
    assert e.value.code == kiln.StatusCode.INVALID_ARGUMENT


def test_gradient_errors():
    def failing(frame):
        raise kiln.KilnError(kiln.StatusCode.FAILED_PRECONDITION, "no gradient on Thursdays")

    def wrong_shape(frame):
        return frame.builder.constant(np.float32(1.0))

    for name, grad_fn in [("PyZeroOutBadGrad", failing), ("PyZeroOutScalarGrad", wrong_shape)]:
        kiln.register_op(name, inputs=["to_zero: float"], outputs=["zeroed: float"], grad_fn=grad_fn)
        kiln.register_kernel(name, zero_out, dtype=np.float32)
    with pytest.raises(kiln.KilnError, match="op 'PyZeroOutBadGrad'.*no gradient on Thursdays") as e:
        grad_of("cpu", "PyZeroOutBadGrad")
    assert e.value.code == kiln.StatusCode.FAILED_PRECONDITION
    with pytest.raises(kiln.KilnError, match="gave operand 0 a cotangent of shape f32\\[\\]") as e:
        grad_of("interpreter", "PyZeroOutScalarGrad")
    assert e.value.code == kiln.StatusCode.INVALID_ARGUMENT
