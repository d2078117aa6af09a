"""Clients, computations, buffers and executables."""

from __future__ import annotations

import ctypes
import os
import weakref
from typing import Any, Iterable, Sequence

import numpy as np

from . import _ffi
from ._errors import check
from ._ffi import lib
from ._handle import Handle
from ._types import ElementType, element_type, host_array, int64_array, to_dtype


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return lib.kiln_version().decode()


def version_number() -> int:
    """The library's version as major * 10000 + minor * 100 + patch."""
    return lib.kiln_version_number()


def backends() -> list[str]:
    """Names of the backends this library contains."""
    count = ctypes.c_size_t()
    check(lib.kiln_backend_count(ctypes.byref(count)))
    names = []
    for i in range(count.value):
        name = ctypes.c_char_p()
        check(lib.kiln_backend_name(i, ctypes.cast(ctypes.byref(name), _ffi._PP)))
        names.append(name.value.decode())
    return names


def _out_string(call, *args) -> str:
    out = ctypes.c_char_p()
    check(call(*args, ctypes.cast(ctypes.byref(out), _ffi._PP)))
    return out.value.decode()


def _out_size(call, *args) -> int:
    out = ctypes.c_size_t()
    check(call(*args, ctypes.byref(out)))
    return out.value


class Computation(Handle):
    """A built or parsed computation (a module with an entry). Immutable, thread-safe."""

    __slots__ = ()
    _destroy = lib.kiln_computation_destroy

    @classmethod
    def from_hlo_text(cls, text: str | bytes) -> Computation:
        """Parses and verifies XLA HLO text (KilnError INVALID_ARGUMENT naming line:column)."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        out = ctypes.c_void_p()
        check(lib.kiln_computation_from_hlo_text(data, len(data), ctypes.byref(out)))
        return cls(out.value)

    @classmethod
    def from_hlo_file(cls, path: str | os.PathLike) -> Computation:
        """Reads and parses an HLO text file."""
        with open(path, "rb") as f:
            return cls.from_hlo_text(f.read())

    def to_hlo_text(self) -> str:
        out = ctypes.c_void_p()
        check(lib.kiln_computation_to_hlo_text(self._p, ctypes.byref(out)))
        try:
            return ctypes.string_at(out.value).decode()
        finally:
            lib.kiln_string_destroy(out.value)

    @property
    def parameter_count(self) -> int:
        return _out_size(lib.kiln_computation_parameter_count, self._p)

    def __str__(self) -> str:
        return self.to_hlo_text()


class _ClientChild(Handle):
    """A handle that must be freed before its client: it keeps the client alive,
    and the client's close() closes it first."""

    __slots__ = ("_client",)

    def __init__(self, ptr: int, client: Client) -> None:
        super().__init__(ptr)
        self._client = client
        client._children.add(self)

    @property
    def client(self) -> Client:
        return self._client


class Buffer(_ClientChild):
    """An immutable array in a device's memory. Reads are thread-safe.

    ``np.asarray(buffer)`` and ``buffer.to_numpy()`` copy it to the host.
    """

    __slots__ = ()
    _destroy = lib.kiln_buffer_destroy

    @property
    def element_type(self) -> ElementType:
        out = ctypes.c_int32()
        check(lib.kiln_buffer_element_type(self._p, ctypes.byref(out)))
        return ElementType(out.value)

    @property
    def dtype(self) -> np.dtype:
        return to_dtype(self.element_type)

    @property
    def ndim(self) -> int:
        return _out_size(lib.kiln_buffer_rank, self._p)

    @property
    def shape(self) -> tuple[int, ...]:
        rank = self.ndim
        dims = (ctypes.c_int64 * rank)()
        check(lib.kiln_buffer_dimensions(self._p, dims, rank))
        return tuple(dims)

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        rank = self.ndim
        out = (ctypes.c_int64 * rank)()
        check(lib.kiln_buffer_minor_to_major(self._p, out, rank))
        return tuple(out)

    @property
    def nbytes(self) -> int:
        """Bytes of the row-major host copy."""
        return _out_size(lib.kiln_buffer_byte_size, self._p)

    def to_numpy(self, out: np.ndarray | None = None) -> np.ndarray:
        """Copies the buffer to a new array, or into `out` (same dtype and shape,
        C-contiguous and writeable)."""
        dtype, shape = self.dtype, self.shape
        if out is None:
            out = np.empty(shape, dtype=dtype)
        else:
            if out.dtype != dtype or out.shape != shape:
                raise ValueError(
                    f"kiln: out is {out.dtype}{list(out.shape)}, the buffer is {dtype}{list(shape)}"
                )
            if not (out.flags.c_contiguous and out.flags.writeable):
                raise ValueError("kiln: out must be C-contiguous and writeable")
        check(lib.kiln_buffer_to_host(self._p, out.ctypes.data, out.nbytes))
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = self.to_numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def to_npy(self, path: str | os.PathLike) -> None:
        """Writes the buffer to a .npy file (bf16 as '<V2')."""
        check(lib.kiln_buffer_to_npy_file(self._p, os.fsencode(path)))

    def __repr__(self) -> str:
        if self.closed:
            return "<kiln.Buffer closed>"
        dims = ",".join(map(str, self.shape))
        return f"<kiln.Buffer {self.element_type.hlo_name}[{dims}]>"


class Cancellation(Handle):
    """Stops running executions from any thread.

    Pass it as ``exe.execute(args, cancellation=c)`` (or to ``exe(...)``);
    ``c.cancel()`` then makes those calls raise KilnError with code CANCELLED.
    One-shot: once cancelled it stays so, and later executions given it raise
    at once. The executable, the client and the arguments stay usable.
    """

    __slots__ = ()
    _destroy = lib.kiln_cancellation_destroy

    def __init__(self) -> None:
        out = ctypes.c_void_p()
        check(lib.kiln_cancellation_create(ctypes.byref(out)))
        super().__init__(out.value)

    def cancel(self) -> None:
        """Cancels every execution given this handle. Thread-safe; again does nothing."""
        lib.kiln_cancellation_cancel(self._p)

    @property
    def cancelled(self) -> bool:
        out = ctypes.c_int()
        check(lib.kiln_cancellation_is_cancelled(self._p, ctypes.byref(out)))
        return bool(out.value)

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("cancelled" if self.cancelled else "not cancelled")
        return f"<kiln.Cancellation {state}>"


def _execute_options(
    rng_seed: int, timeout: float | None, cancellation: Cancellation | None
) -> _ffi.ExecuteOptions:
    timeout_ns = 0
    if timeout is not None:
        if not timeout > 0:
            raise ValueError(f"kiln: timeout must be a positive number of seconds, got {timeout!r}")
        timeout_ns = max(1, min(int(timeout * 1e9), 2**63 - 1))
    if cancellation is not None and not isinstance(cancellation, Cancellation):
        raise TypeError(f"kiln: cancellation must be a kiln.Cancellation, not {type(cancellation).__name__}")
    return _ffi.ExecuteOptions(
        ctypes.sizeof(_ffi.ExecuteOptions),
        rng_seed,
        timeout_ns,
        None if cancellation is None else cancellation._p,
    )


class Executable(_ClientChild):
    """A computation compiled for a client. Thread-safe: it may run concurrently.

    ``exe(*args)`` takes NumPy arrays (or anything np.asarray accepts) and Buffers
    and returns NumPy arrays: one array for one result, else a tuple.
    ``exe.execute(args)`` returns the results as Buffers.
    Both take ``timeout`` (seconds; KilnError DEADLINE_EXCEEDED once it has
    passed) and ``cancellation`` (a Cancellation; KilnError CANCELLED once it
    is cancelled), which stop even a loop that never ends.
    """

    __slots__ = ("_num_params", "_num_results")
    _destroy = lib.kiln_executable_destroy

    def __init__(self, ptr: int, client: Client) -> None:
        super().__init__(ptr, client)
        self._num_params = _out_size(lib.kiln_executable_parameter_count, self._p)
        self._num_results = _out_size(lib.kiln_executable_result_count, self._p)

    @property
    def parameter_count(self) -> int:
        return self._num_params

    @property
    def result_count(self) -> int:
        return self._num_results

    def parameter_type(self, index: int) -> ElementType:
        out = ctypes.c_int32()
        check(lib.kiln_executable_parameter_type(self._p, index, ctypes.byref(out)))
        return ElementType(out.value)

    def execute(
        self,
        arguments: Iterable[Any] = (),
        *,
        rng_seed: int = 0,
        timeout: float | None = None,
        cancellation: Cancellation | None = None,
    ) -> list[Buffer]:
        """Runs once; arguments are Buffers or host arrays (copied in for this call)."""
        options = _execute_options(rng_seed, timeout, cancellation)
        arguments = list(arguments)
        temporaries: list[Buffer] = []
        try:
            buffers = []
            for i, arg in enumerate(arguments):
                if isinstance(arg, Buffer):
                    buffers.append(arg)
                    continue
                # Host values that are not arrays yet take the parameter's type.
                dtype = None
                if not isinstance(arg, (np.ndarray, np.generic)) and i < self._num_params:
                    dtype = self.parameter_type(i)
                temp = self._client.buffer(arg, dtype=dtype)
                temporaries.append(temp)
                buffers.append(temp)
            return self._execute(buffers, options)
        finally:
            for temp in temporaries:
                temp.close()

    def _execute(self, buffers: Sequence[Buffer], options: _ffi.ExecuteOptions) -> list[Buffer]:
        args = (ctypes.c_void_p * max(len(buffers), 1))(*[b._p for b in buffers])
        capacity = self._num_results
        results = (ctypes.c_void_p * max(capacity, 1))()
        count = ctypes.c_size_t()
        check(
            lib.kiln_executable_execute(
                self._p, args, len(buffers), ctypes.byref(options), results, capacity, ctypes.byref(count)
            )
        )
        return [Buffer(results[i], self._client) for i in range(count.value)]

    def __call__(
        self,
        *arguments: Any,
        rng_seed: int = 0,
        timeout: float | None = None,
        cancellation: Cancellation | None = None,
    ) -> np.ndarray | tuple[np.ndarray, ...]:
        outputs = []
        for result in self.execute(arguments, rng_seed=rng_seed, timeout=timeout, cancellation=cancellation):
            with result:
                outputs.append(result.to_numpy())
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


class Client(Handle):
    """One backend and its devices. Thread-safe.

    Buffers and executables made from a client keep it alive; closing the client
    closes them first.
    """

    __slots__ = ("_children",)
    _destroy = lib.kiln_client_destroy

    def __init__(self, backend: str | None = None) -> None:
        """Opens `backend` ("interpreter", "cpu", ...); None picks the default."""
        self._children: weakref.WeakSet = weakref.WeakSet()
        options = _ffi.ClientOptions(
            ctypes.sizeof(_ffi.ClientOptions), None if backend is None else backend.encode()
        )
        out = ctypes.c_void_p()
        check(lib.kiln_client_create(ctypes.byref(options), ctypes.byref(out)))
        super().__init__(out.value)

    def close(self) -> None:
        """Closes the client's buffers and executables, then the client."""
        children = getattr(self, "_children", None)
        if children is not None:
            for child in list(children):
                child.close()
        super().close()

    @property
    def backend(self) -> str:
        return _out_string(lib.kiln_client_backend_name, self._p)

    @property
    def devices(self) -> list[str]:
        """Descriptions of the backend's devices."""
        count = _out_size(lib.kiln_client_device_count, self._p)
        return [_out_string(lib.kiln_client_device_description, self._p, i) for i in range(count)]

    def buffer(self, array: Any, *, dtype: Any = None, minor_to_major: Sequence[int] | None = None) -> Buffer:
        """Copies a host array (anything np.asarray accepts) to a new device buffer.
        `dtype` converts it first; `minor_to_major` sets the device layout."""
        host, et = host_array(array, dtype)
        if minor_to_major is not None and len(minor_to_major) != host.ndim:
            raise ValueError(f"kiln: minor_to_major needs {host.ndim} entries")
        out = ctypes.c_void_p()
        check(
            lib.kiln_client_buffer_from_host(
                self._p,
                et,
                int64_array(host.shape),
                host.ndim,
                int64_array(minor_to_major),
                host.ctypes.data,
                host.nbytes,
                ctypes.byref(out),
            )
        )
        return Buffer(out.value, self)

    def buffer_from_npy(self, path: str | os.PathLike, element_type: Any = None) -> Buffer:
        """Reads a .npy file into a new buffer. Pass element_type="bf16" for
        bf16 data saved as 'V2'."""
        et = ElementType.INVALID if element_type is None else _element_type(element_type)
        out = ctypes.c_void_p()
        check(lib.kiln_client_buffer_from_npy_file(self._p, os.fsencode(path), et, ctypes.byref(out)))
        return Buffer(out.value, self)

    def compile(
        self, computation: Computation, *, optimization_level: int = 2, num_threads: int = 0
    ) -> Executable:
        """Compiles `computation` for this client's backend."""
        if not isinstance(computation, Computation):
            raise TypeError(f"kiln: compile needs a Computation, not {type(computation).__name__}")
        options = _ffi.CompileOptions(ctypes.sizeof(_ffi.CompileOptions), optimization_level, num_threads)
        out = ctypes.c_void_p()
        check(lib.kiln_client_compile(self._p, computation._p, ctypes.byref(options), ctypes.byref(out)))
        return Executable(out.value, self)

    def transfer_to_infeed(self, array: Any, *, dtype: Any = None) -> None:
        """Queues a host array for the next infeed op this client's executables run."""
        host, et = host_array(array, dtype)
        check(
            lib.kiln_client_transfer_to_infeed(
                self._p, et, int64_array(host.shape), host.ndim, host.ctypes.data, host.nbytes
            )
        )

    def __repr__(self) -> str:
        return "<kiln.Client closed>" if self.closed else f"<kiln.Client {self.backend}>"


_element_type = element_type
