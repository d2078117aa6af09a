"""The seed's ZeroOut op ("Adding an op") defined in Python and run on Kiln.

Four versions: int32 only; with ``preserve_index: int >= 0 = 0`` (its bounds
check in the kernel); polymorphic ``T: {float, int32}`` with a kernel per
type; and the list version ``to_zero: N * T``. Python kernels run on the cpu
and interpreter backends.

    python samples/python/zero_out/zero_out.py [cpu|interpreter]
"""

import sys

import numpy as np

import kiln


def zero_out(frame: kiln.KernelFrame) -> None:
    """Every result: a copy of its argument with all but one element zero."""
    keep = frame.attrs.get("preserve_index", 0)
    for x, out in zip(frame.args, frame.results):
        if x.ndim != 1:
            raise ValueError("ZeroOut expects a 1-D vector.")
        if keep >= x.shape[0] and "preserve_index" in frame.attrs:
            raise IndexError(f"preserve_index out of range: {keep} for a vector of {x.shape[0]}")
        out[...] = 0
        if x.size:
            out[keep] = x[keep]


def zero_out_grad(frame):
    """The seed's _zero_out_grad: each output's cotangent at the preserved index, zero elsewhere."""
    b = frame.builder
    keep = frame.attrs.get("preserve_index", 0)
    grads = []
    for x, grad in zip(frame.operands, frame.output_grads):
        at_keep = b.eq(b.iota(np.int64, x.shape, 0), b.constant(np.int64(keep)))
        grads.append(b.select(at_keep, grad, b.constant(np.zeros(x.shape, dtype=x.dtype))))
    return grads


def register() -> None:
    kiln.register_op("ZeroOut", inputs=["to_zero: int32"], outputs=["zeroed: int32"], doc="Keeps element 0.")
    kiln.register_kernel("ZeroOut", zero_out, dtype=np.int32)
    kiln.register_op(
        "ZeroOutIndex",
        attrs=["preserve_index: int >= 0 = 0"],
        inputs=["to_zero: int32"],
        outputs=["zeroed: int32"],
        doc="Keeps element preserve_index.",
    )
    kiln.register_kernel("ZeroOutIndex", zero_out, dtype=np.int32)
    kiln.register_op(
        "ZeroOutPoly",
        attrs=["T: {float, int32}"],
        inputs=["to_zero: T"],
        outputs=["zeroed: T"],
        grad_fn=zero_out_grad,
    )
    for dtype in (np.float32, np.int32):  # a kernel per type, as the seed registers them
        kiln.register_kernel("ZeroOutPoly", zero_out, dtype=dtype)
    kiln.register_op(
        "ZeroOutList",
        attrs=["N: int >= 1", "T: {float, int32}"],
        inputs=["to_zero: N * T"],
        outputs=["zeroed: N * T"],
    )
    kiln.register_kernel("ZeroOutList", zero_out)  # any type


def call(client: kiln.Client, op: str, xs: list, attrs=None, show_hlo: bool = False):
    with kiln.Builder(op) as b:
        params = [b.parameter(i, x.dtype, x.shape) for i, x in enumerate(xs)]
        computation = b.build(b.call_registered(op, params, attrs))
    with computation:
        if show_hlo:
            print(computation.to_hlo_text(), end="")
        with client.compile(computation) as executable:
            return executable(*xs)


def gradient(client: kiln.Client, x: np.ndarray, w: np.ndarray) -> list:
    """d/dx dot(ZeroOutPoly(x), w): w at the preserved index 0, zero elsewhere."""
    with kiln.Builder("loss") as b:
        loss = b.dot(b.call_registered("ZeroOutPoly", [b.parameter(0, np.float32, x.shape)]), b.constant(w))
        with b.build(loss) as computation, computation.value_and_grad(0) as grad:
            with client.compile(grad) as executable:
                _, dx = executable(x)
                return dx.tolist()


def main() -> None:
    register()
    x = np.array([5, 4, 3, 2, 1], dtype=np.int32)
    with kiln.Client(sys.argv[1] if len(sys.argv) > 1 else None) as client:
        print("ZeroOut:", call(client, "ZeroOut", [x]).tolist())
        print("ZeroOutIndex:", call(client, "ZeroOutIndex", [x]).tolist())
        result = call(client, "ZeroOutIndex", [x], {"preserve_index": 3}, show_hlo=True)
        print("ZeroOutIndex preserve_index=3:", result.tolist())
        print("ZeroOutPoly f32:", call(client, "ZeroOutPoly", [x.astype(np.float32)]).tolist())
        print("ZeroOutList:", [r.tolist() for r in call(client, "ZeroOutList", [x, x * 2])])
        w = np.array([2, 3, 4, 5, 6], dtype=np.float32)
        dx = gradient(client, np.array([1.5, 2.5, 3.5, 4.5, 5.5], dtype=np.float32), w)
        print("d/dx dot(ZeroOutPoly(x), w):", dx)
        if dx != [2.0, 0.0, 0.0, 0.0, 0.0]:
            sys.exit(f"ZeroOutPoly's gradient is {dx}, not w at index 0 and zero elsewhere")
        try:
            call(client, "ZeroOutIndex", [x], {"preserve_index": 7})
        except kiln.KilnError as error:
            print("expected error:", error)
    print(kiln.registered_ops(), end="")


if __name__ == "__main__":
    main()
