"""User-defined ops from Python: definitions, Python kernels, shape and gradient functions.

An op is defined once per process (``register_op``) with TensorFlow-style specs
("to_zero: int32", "T: {float, int32}", "preserve_index: int >= 0 = 0"); its
kernels (``register_kernel``) are Python functions run on the cpu and
interpreter backends, and ``register_device_kernel`` gives it a SPIR-V shader
on vulkan or PTX on cuda; a builder calls it with ``Builder.call_registered``; a
gradient function (``register_op(..., grad_fn=...)``) makes it differentiable.
Callbacks stay alive for the life of the process, as the ops do.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Callable, Sequence

import numpy as np

from . import _ffi
from ._errors import KilnError, StatusCode, check
from ._ffi import lib
from ._types import ElementType, element_type, to_dtype

_keep_alive: list = []  # C trampolines of registered callbacks, for the process


def _attr_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        return text if any(c in text for c in ".e") else text + ".0"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    if isinstance(value, (ElementType, np.dtype)) or (
        isinstance(value, type) and issubclass(value, np.generic)
    ):
        return element_type(value).name.lower()
    if isinstance(value, Shape):
        return "shape<" + ",".join(str(int(d)) for d in value.dims) + ">"
    if isinstance(value, np.ndarray):
        et = element_type(value.dtype)
        dims = ",".join(str(d) for d in value.shape)
        items = ", ".join(_attr_text(v.item()) for v in value.reshape(-1))
        return f"tensor<{et.name.lower()}[{dims}], [{items}]>"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_attr_text(v) for v in value) + "]"
    raise TypeError(f"kiln: {value!r} is not an attribute value")


class Shape:
    """A ``shape`` attribute value (dimensions only)."""

    def __init__(self, dims: Sequence[int]) -> None:
        self.dims = tuple(int(d) for d in dims)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shape) and other.dims == self.dims

    def __repr__(self) -> str:
        return f"Shape({list(self.dims)})"


def format_attrs(attrs: dict | str | None) -> bytes | None:
    """The attribute dictionary text kiln_op_call_registered takes."""
    if attrs is None:
        return None
    if isinstance(attrs, str):
        return attrs.encode()
    return ("{" + ", ".join(f"{name} = {_attr_text(v)}" for name, v in attrs.items()) + "}").encode()


def _attr_value(attr: _ffi.OpAttr) -> Any:
    kind = attr.kind
    if kind == 1:
        return int(attr.i)
    if kind == 2:
        return float(attr.f)
    if kind == 3:
        return bool(attr.i)
    if kind == 4:
        return ctypes.string_at(attr.s, attr.s_size).decode("utf-8", "replace")
    if kind == 5:
        return ElementType(attr.type)
    if kind == 6:
        return Shape([attr.dims[i] for i in range(attr.rank)])
    if kind == 7:
        dims = tuple(attr.dims[i] for i in range(attr.rank))
        raw = ctypes.string_at(attr.data, attr.byte_size) if attr.byte_size else b""
        return np.frombuffer(raw, dtype=to_dtype(ElementType(attr.type))).reshape(dims).copy()
    if kind == 8:
        return [_attr_value(attr.items[i]) for i in range(attr.num_items)]
    return None


def _attrs(frame: _ffi.OpCallFrame) -> dict:
    return {frame.attrs[i].name.decode(): _attr_value(frame.attrs[i]) for i in range(frame.num_attrs)}


def _array(buffer: _ffi.OpBuffer, writable: bool) -> np.ndarray:
    dims = tuple(buffer.dims[i] for i in range(buffer.rank))
    dtype = to_dtype(ElementType(buffer.type))
    if buffer.byte_size == 0 or not buffer.data:
        return np.zeros(dims, dtype=dtype)
    raw = (ctypes.c_char * buffer.byte_size).from_address(buffer.data)
    array = np.frombuffer(raw, dtype=dtype).reshape(dims)
    if not writable:
        array.flags.writeable = False
    return array


class KernelFrame:
    """What a Python kernel gets: ``args`` (read-only NumPy views of the
    arguments), ``results`` (writable views it fills, every element), ``attrs``
    (name -> value, defaults and inferred type attributes included),
    ``op_name`` and ``backend``. The views live for the call only."""

    def __init__(self, frame: _ffi.OpCallFrame) -> None:
        self.op_name = frame.op_name.decode()
        self.backend = frame.backend.decode()
        self.args = [_array(frame.args[i], False) for i in range(frame.num_args)]
        self.results = [_array(frame.results[i], True) for i in range(frame.num_results)]
        self.attrs = _attrs(frame)


class ShapeFrame:
    """What a shape function gets: ``args`` as (ElementType, dims) pairs,
    ``attrs``, and ``results`` as (ElementType, dims) pairs with the default
    dims; it changes them with ``set_result_dims``."""

    def __init__(self, pointer: Any) -> None:
        frame = pointer.contents
        self._pointer = pointer
        self.op_name = frame.op_name.decode()
        self.args = [
            (ElementType(b.type), tuple(b.dims[i] for i in range(b.rank)))
            for b in (frame.args[k] for k in range(frame.num_args))
        ]
        self.results = [
            (ElementType(b.type), tuple(b.dims[i] for i in range(b.rank)))
            for b in (frame.results[k] for k in range(frame.num_results))
        ]
        self.attrs = _attrs(frame)

    def set_result_dims(self, index: int, dims: Sequence[int]) -> None:
        values = (ctypes.c_int64 * max(len(dims), 1))(*[int(d) for d in dims])
        check(lib.kiln_user_op_frame_set_result_dims(self._pointer, index, values, len(dims)))


class GradFrame:
    """What a gradient function gets: ``builder`` (the Builder of the gradient
    computation, valid during the call only), ``operands``, ``outputs`` (one
    per output array) and ``output_grads`` (their cotangents) as its Ops, and
    ``attrs``. It returns the operands' cotangents: an Op for an op with one
    operand, else a sequence with one Op or None (no gradient, zero) per
    operand, each of its operand's shape."""

    def __init__(self, builder: Any, operands: list, outputs: list, output_grads: list, attrs: dict):
        self.builder = builder
        self.operands = operands
        self.outputs = outputs
        self.output_grads = output_grads
        self.attrs = attrs


def _grad_trampoline(grad_fn: Callable[[GradFrame], Any]):
    from ._builder import Builder, Op  # a cycle at import time otherwise

    def trampoline(
        builder_ptr,
        operands,
        num_operands,
        outputs,
        output_grads,
        num_outputs,
        attrs,
        num_attrs,
        operand_grads,
        _user_data,
    ):
        # The builder is the library's: borrowed for the call, never destroyed here.
        builder = Builder.__new__(Builder)
        builder._ptr = builder_ptr
        try:
            frame = GradFrame(
                builder,
                [Op(builder, operands[i]) for i in range(num_operands)],
                [Op(builder, outputs[i]) for i in range(num_outputs)],
                [Op(builder, output_grads[i]) for i in range(num_outputs)],
                {attrs[i].name.decode(): _attr_value(attrs[i]) for i in range(num_attrs)},
            )
            grads = grad_fn(frame)
            if grads is None or isinstance(grads, Op):
                grads = [grads]
            grads = list(grads)
            if len(grads) > num_operands:
                raise ValueError(
                    f"the gradient function returned {len(grads)} cotangents for {num_operands} operand(s)"
                )
            for i, grad in enumerate(grads):
                if grad is None:
                    continue
                if not isinstance(grad, Op) or grad.builder is not builder:
                    raise TypeError(f"cotangent {i} is not an Op of the gradient's builder")
                operand_grads[i] = grad.handle
            return None
        except BaseException as error:  # noqa: BLE001 - becomes the status
            return _error_status(error)
        finally:
            builder._ptr = None

    return _ffi.OpGradFn(trampoline)


def _error_status(error: BaseException) -> int:
    if isinstance(error, KilnError):
        code, message = int(error.code), error.message
    elif isinstance(error, (ValueError, IndexError, TypeError)):
        code, message = int(StatusCode.INVALID_ARGUMENT), str(error)
    else:
        code, message = int(StatusCode.UNKNOWN), f"{type(error).__name__}: {error}"
    return lib.kiln_status_create(code, message.encode("utf-8", "replace"))


def register_op(
    name: str,
    *,
    inputs: Sequence[str],
    outputs: Sequence[str],
    attrs: Sequence[str] = (),
    doc: str = "",
    shape_fn: Callable[[ShapeFrame], None] | None = None,
    grad_fn: Callable[[GradFrame], Any] | None = None,
) -> None:
    """Defines op `name` process-wide from TensorFlow-style specs.

    ``attrs``: "preserve_index: int >= 0 = 0", "T: {float, int32}",
    "N: int >= 1", "T: list(type)"; ``inputs``/``outputs``: "to_zero: int32",
    "to_zero: T", "in: N * T". ``shape_fn(frame)`` may change the result dims
    (``frame.set_result_dims``) or raise to refuse the call. ``grad_fn(frame)``
    (a GradFrame) builds the operands' cotangents for ``value_and_grad``; an
    exception it raises becomes that call's error. Raises KilnError
    (INVALID_ARGUMENT for a bad spec, ALREADY_EXISTS for a taken name).
    """
    out = ctypes.c_void_p()
    check(lib.kiln_user_op_def_create(name.encode(), ctypes.byref(out)))
    definition = out.value
    try:
        for spec in attrs:
            check(lib.kiln_user_op_def_add_attr(definition, spec.encode()))
        for spec in inputs:
            check(lib.kiln_user_op_def_add_input(definition, spec.encode()))
        for spec in outputs:
            check(lib.kiln_user_op_def_add_output(definition, spec.encode()))
        check(lib.kiln_user_op_def_set_doc(definition, doc.encode()))
        if shape_fn is not None:

            def trampoline(pointer):
                try:
                    shape_fn(ShapeFrame(pointer))
                    return None
                except BaseException as error:  # noqa: BLE001 - becomes the status
                    return _error_status(error)

            callback = _ffi.OpShapeFn(trampoline)
            check(lib.kiln_user_op_def_set_shape_fn(definition, callback))
        else:
            callback = None
        grad_callback = _grad_trampoline(grad_fn) if grad_fn is not None else None
        if grad_callback is not None:
            check(lib.kiln_user_op_def_set_grad_fn(definition, grad_callback))
        check(lib.kiln_user_op_register(definition))
        if callback is not None:
            _keep_alive.append((shape_fn, callback))
        if grad_callback is not None:
            _keep_alive.append((grad_fn, grad_callback))
    finally:
        lib.kiln_user_op_def_destroy(definition)


def register_kernel(
    op: str, fn: Callable[[KernelFrame], None], *, dtype: Any = None, backend: str = "host"
) -> None:
    """Registers Python kernel ``fn(frame)`` of `op` for `backend` ("cpu",
    "interpreter" or "host" for both) and `dtype` (None: any type). An
    exception it raises becomes the execute's error (KilnError keeps its
    code; ValueError, IndexError and TypeError are INVALID_ARGUMENT)."""

    def trampoline(pointer):
        try:
            fn(KernelFrame(pointer.contents))
            return None
        except BaseException as error:  # noqa: BLE001 - becomes the status
            return _error_status(error)

    callback = _ffi.OpKernelFn(trampoline)
    et = 0 if dtype is None else int(element_type(dtype))
    check(
        lib.kiln_user_op_register_kernel(
            op.encode(), backend.encode(), et, callback, None, _ffi.HostReleaseFn()
        )
    )
    _keep_alive.append((fn, callback))


def register_device_kernel(
    op: str,
    backend: str,
    code: bytes | str,
    entry: str,
    *,
    dtype: Any = None,
    block_size: int = 0,
    grid_size: int = 0,
) -> None:
    """Registers a device kernel of `op` for `backend` and `dtype` (None: any
    type): a SPIR-V module (bytes) for "vulkan", PTX text (str or bytes) for
    "cuda", with entry point `entry`. Each call is one launch with the frame
    kiln.h documents (kiln_user_op_register_device_kernel): a buffer per
    argument then per result, each buffer's element count, then the op's int
    and bool attributes. `block_size` and `grid_size` set the launch (0: 64
    invocations a workgroup on vulkan, 256 threads a block on cuda, a grid
    covering result 0). Code that is not SPIR-V or PTX is INVALID_ARGUMENT,
    an entry point it lacks NOT_FOUND, a taken (backend, type) ALREADY_EXISTS."""
    data = code.encode() if isinstance(code, str) else bytes(code)
    et = 0 if dtype is None else int(element_type(dtype))
    check(
        lib.kiln_user_op_register_device_kernel_with_launch(
            op.encode(), backend.encode(), et, data, len(data), entry.encode(), block_size, grid_size
        )
    )


def registered_ops() -> str:
    """A description of every registered op (as ``kiln info --ops`` prints it)."""
    out = ctypes.c_void_p()
    check(lib.kiln_user_op_registry_describe(ctypes.byref(out)))
    try:
        return ctypes.string_at(out.value).decode() if out.value else ""
    finally:
        lib.kiln_string_destroy(out.value)
