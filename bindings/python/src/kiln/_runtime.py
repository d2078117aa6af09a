"""Clients, computations, buffers and executables."""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import os
import threading
import weakref
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from . import _dlpack, _ffi
from ._errors import KilnError, check
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

    def grad(self, wrt: int | Sequence[int] = 0) -> Computation:
        """Reverse-mode derivative (vector-Jacobian product) as a new computation.

        It takes this computation's parameters, then (unless the result is one
        float scalar, whose cotangent is 1) one cotangent per result leaf, and
        returns this computation's result leaves followed by the gradient for
        each parameter number of ``wrt`` (an int or a sequence, in that order).
        KilnError INVALID_ARGUMENT or UNIMPLEMENTED names a bad number or an op
        without a derivative.
        """
        return self._gradient(lib.kiln_computation_vjp, wrt)

    def value_and_grad(self, wrt: int | Sequence[int] = 0) -> Computation:
        """For a scalar loss: a computation with the same parameters returning
        ``(loss, *gradients)``, one gradient per parameter number of ``wrt``."""
        return self._gradient(lib.kiln_computation_value_and_grad, wrt)

    def jvp(self, wrt: int | Sequence[int] = 0) -> Computation:
        """Forward-mode derivative (Jacobian-vector product) as a new computation.

        It takes this computation's parameters, then one tangent per parameter
        number of ``wrt`` (an int or a sequence, in that order, each of its
        parameter's shape), and returns this computation's result leaves
        followed by the tangent of each result leaf (zeros for integer
        leaves). KilnError INVALID_ARGUMENT or UNIMPLEMENTED names a bad
        number or an op without a derivative.
        """
        return self._gradient(lib.kiln_computation_jvp, wrt)

    def _gradient(self, call, wrt: int | Sequence[int]) -> Computation:
        numbers = [wrt] if isinstance(wrt, (int, np.integer)) else list(wrt)
        out = ctypes.c_void_p()
        check(call(self._p, int64_array(numbers), len(numbers), ctypes.byref(out)))
        return Computation(out.value)

    def __str__(self) -> str:
        return self.to_hlo_text()


def grad(computation: Computation, wrt: int | Sequence[int] = 0) -> Computation:
    """``computation.grad(wrt)``: its vector-Jacobian product (see Computation.grad)."""
    return computation.grad(wrt)


def value_and_grad(computation: Computation, wrt: int | Sequence[int] = 0) -> Computation:
    """``computation.value_and_grad(wrt)``: ``(loss, *gradients)`` of a scalar loss."""
    return computation.value_and_grad(wrt)


def jvp(computation: Computation, wrt: int | Sequence[int] = 0) -> Computation:
    """``computation.jvp(wrt)``: ``(*results, *tangents)`` (see Computation.jvp)."""
    return computation.jvp(wrt)


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

    @property
    def device(self) -> Device:
        """The device the buffer lives on."""
        out = ctypes.c_void_p()
        check(lib.kiln_buffer_device(self._p, ctypes.byref(out)))
        return Device(out.value, self._client)

    def copy_to(self, device: Device) -> Buffer:
        """Copies the buffer (once it is ready) to a new buffer on `device`, a device
        of the same client (else KilnError INVALID_ARGUMENT)."""
        if not isinstance(device, Device):
            raise TypeError(f"kiln: copy_to needs a kiln.Device, not {type(device).__name__}")
        out = ctypes.c_void_p()
        check(lib.kiln_buffer_copy_to_device(self._p, device._p, ctypes.byref(out)))
        return Buffer(out.value, self._client)

    @property
    def is_host_alias(self) -> bool:
        """Whether the buffer reads the host array given to Device.alias_host in place."""
        out = ctypes.c_int()
        check(lib.kiln_buffer_is_host_alias(self._p, ctypes.byref(out)))
        return bool(out.value)

    @property
    def cuda_memory(self) -> tuple[int, int] | None:
        """(CUDA device ordinal, device address) of a buffer of a "cuda" client, once
        it is ready; None on the other backends. The address is valid while the
        buffer is open; never write through it."""
        if self.client.backend != "cuda":
            self._p  # noqa: B018 - ValueError once closed
            return None
        ordinal, address = ctypes.c_int(), ctypes.c_uint64()
        check(lib.kiln_buffer_cuda_memory(self._p, ctypes.byref(ordinal), ctypes.byref(address)))
        return ordinal.value, address.value

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """The DLPack protocol: a PyCapsule holding a DLPack tensor of the buffer (once
        it is ready; a failed execution's KilnError is raised).

        ``max_version`` >= (1, 0) gives a DLPack 1.x tensor (capsule
        "dltensor_versioned", flagged read-only), else the legacy struct ("dltensor",
        which cannot say read-only: never write to what a consumer makes of it). On
        the host backends ("cpu", "interpreter") the tensor is the buffer's own
        memory, no copy; on "cuda" its own GPU memory (kDLCUDA), no copy; on the
        others (vulkan) a host copy. It stays valid after the buffer and its client
        are closed, until the consumer lets it go.

        ``stream`` is DLPack's: None for host memory; for a cuda buffer the
        consumer's CUDA stream (None or 1 the legacy default stream, 2 the
        per-thread one, -1 none, or a cudaStream_t; 0 is refused as the
        specification says). Kiln's work on the buffer is complete when it is
        ready, which the export waits for, so the data may be read on any stream.

        ``copy=True`` is honoured with a copy that is the consumer's alone: on a
        cuda buffer a new buffer on the same GPU (flagged IS_COPIED when
        versioned), elsewhere a new NumPy array exported through NumPy's own
        ``__dlpack__`` (writeable, flagged IS_COPIED when versioned).
        ``copy=False`` raises BufferError where the data would be copied (vulkan).
        ``dl_device`` may be the buffer's own device or (1, 0), kDLCPU, for a host
        copy (BufferError with copy=False). Vulkan memory (kDLVulkan) is never
        exported: no other library here can open a Kiln VkDevice's memory."""
        own = self.__dlpack_device__()
        on_gpu = own[0] == _dlpack.KDL_CUDA
        if on_gpu:
            if stream is not None and (
                not isinstance(stream, int) or stream == _dlpack.CUDA_DISALLOWED_STREAM or stream < -1
            ):
                raise BufferError(
                    "kiln: stream must be None, -1, 1, 2 or a CUDA stream handle for kDLCUDA memory, "
                    f"got {stream!r}"
                )
        elif stream is not None:
            raise BufferError(f"kiln: stream must be None for host (kDLCPU) memory, got {stream!r}")
        to_host = False
        if dl_device is not None and tuple(dl_device) != own:
            requested = tuple(dl_device)
            if requested[0] == _dlpack.KDL_VULKAN:
                raise BufferError(
                    "kiln: Kiln does not export kDLVulkan: its Vulkan memory belongs to Kiln's own VkDevice, "
                    "which no other library here can open; ask for (1, 0), a host copy"
                )
            if not on_gpu:
                raise BufferError(f"kiln: can only export to kDLCPU device 0 (1, 0), not {requested}")
            if requested != (_dlpack.KDL_CPU, 0):
                raise BufferError(f"kiln: can export to {own} or to kDLCPU device 0 (1, 0), not {requested}")
            if copy is False:
                raise BufferError("kiln: a cuda buffer reaches the host (1, 0) only as a copy (copy=False)")
            to_host = True
        versioned = max_version is not None and int(max_version[0]) >= 1
        if to_host or (copy and not on_gpu):
            fresh = self.to_numpy()
            if versioned:
                try:
                    capsule = fresh.__dlpack__(max_version=_dlpack.MAX_VERSION)
                except TypeError:  # NumPy < 2.1 knows only the legacy struct
                    return fresh.__dlpack__()
                _dlpack.mark_copied(capsule)
                return capsule
            return fresh.__dlpack__()
        if copy is False and not on_gpu and self.client.backend not in _HOST_BACKENDS:
            raise BufferError(f"kiln: the {self.client.backend} backend can only export a copy (copy=False)")
        source = self.copy_to(self.device) if copy else self
        try:
            out = ctypes.c_void_p()
            export = lib.kiln_buffer_to_dlpack_versioned if versioned else lib.kiln_buffer_to_dlpack
            check(export(source._p, ctypes.byref(out)))
            capsule = _dlpack.new_capsule(out.value, versioned)
        finally:
            if source is not self:
                source.close()  # the tensor keeps the copy's memory
        if copy:
            _dlpack.mark_copied(capsule)
        return capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        """(2, ordinal), kDLCUDA and the GPU's CUDA ordinal, for a buffer of a "cuda"
        client; else (1, 0): kDLCPU, device 0 (a host copy from vulkan, whose memory
        no other library can read)."""
        memory = self.cuda_memory
        if memory is not None:
            return (_dlpack.KDL_CUDA, memory[0])
        return (_dlpack.KDL_CPU, 0)

    def ready_event(self) -> Event:
        """An Event that is ready once the buffer holds its data (at once for one made
        from host memory); it carries the error of a failed execution that was to fill it."""
        out = ctypes.c_void_p()
        check(lib.kiln_buffer_ready_event(self._p, ctypes.byref(out)))
        return Event(out.value)

    def __repr__(self) -> str:
        if self.closed:
            return "<kiln.Buffer closed>"
        try:
            dims = ",".join(map(str, self.shape))
            return f"<kiln.Buffer {self.element_type.hlo_name}[{dims}]>"
        except KilnError as error:  # a donated buffer answers nothing
            return f"<kiln.Buffer ({error.code.name if hasattr(error.code, 'name') else error.code})>"


# Callbacks handed to the library. One ctypes function object of each kind lives for
# the whole process; each registration keeps its Python state in a table under a
# token (the C user_data) until the library calls back, which drops it.
_tokens = itertools.count(1)
_pending_events: dict[int, Callable[[KilnError | None], Any]] = {}
_pending_releases: dict[int, tuple[Any, Callable[[], Any] | None]] = {}


def _error_of(status: int | None) -> KilnError | None:
    """A KilnError copied from a borrowed status (not destroyed); None for NULL."""
    if not status:
        return None
    message = (lib.kiln_status_message(status) or b"").decode("utf-8", "replace")
    return KilnError(lib.kiln_status_code(status), message)


@_ffi.EventCallbackFn
def _on_event_ready(status: int | None, user_data: int | None) -> None:
    fn = _pending_events.pop(user_data or 0, None)
    if fn is not None:
        fn(_error_of(status))


@_ffi.HostReleaseFn
def _on_host_release(user_data: int | None) -> None:
    _, on_release = _pending_releases.pop(user_data or 0, (None, None))
    if on_release is not None:
        on_release()


def _settle(future: asyncio.Future, error: KilnError | None) -> None:
    if future.cancelled():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


class Event(Handle):
    """The completion of background work: an ``Executable.execute_async`` or the
    filling of a buffer (``Buffer.ready_event()``). One-shot: it becomes ready once,
    with success or the work's error (a KilnError).

    ``event.wait()`` blocks (releasing the GIL), ``event.done()`` polls,
    ``event.add_done_callback(fn)`` calls ``fn(error)`` when ready, and
    ``await event`` waits in asyncio without blocking the loop. Closing the
    handle cancels nothing. It may outlive the client of its work.
    """

    __slots__ = ()
    _destroy = lib.kiln_event_destroy

    def wait(self) -> None:
        """Blocks until the event is ready; raises the work's KilnError if it failed.
        May be called any number of times."""
        check(lib.kiln_event_await(self._p))

    def done(self) -> bool:
        """Whether the event is ready. Never blocks."""
        out = ctypes.c_int()
        check(lib.kiln_event_is_ready(self._p, ctypes.byref(out)))
        return bool(out.value)

    @property
    def is_ready(self) -> bool:
        """Same as done()."""
        return self.done()

    def add_done_callback(self, fn: Callable[[KilnError | None], Any]) -> None:
        """Calls ``fn(error)`` once when the event is ready: error is None on success,
        else the work's KilnError. It runs at once on this thread when the event is
        ready already, else on the library's worker thread that finishes the work:
        it must be quick and must not wait on another event. Exceptions it raises
        are reported as unraisable (ctypes prints them)."""
        if not callable(fn):
            raise TypeError(f"kiln: add_done_callback needs a callable, not {type(fn).__name__}")
        ptr = self._p
        token = next(_tokens)
        _pending_events[token] = fn
        try:
            check(lib.kiln_event_on_ready(ptr, _on_event_ready, token))
        except BaseException:
            _pending_events.pop(token, None)
            raise

    def __await__(self):
        """``await event``: returns None, or raises the work's KilnError."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def ready(error: KilnError | None) -> None:
            try:
                loop.call_soon_threadsafe(_settle, future, error)
            except RuntimeError:  # the loop was closed meanwhile: nobody waits any more
                pass

        self.add_done_callback(ready)
        return future.__await__()

    def __repr__(self) -> str:
        if self.closed:
            return "<kiln.Event closed>"
        return f"<kiln.Event {'ready' if self.done() else 'pending'}>"


class Device:
    """A device of a client: where buffers live and executables run.

    The library owns device handles: a Device keeps its Client (Python object)
    alive and is usable while that client is open. Devices compare equal when
    they are the same device; ``str(device)`` is its description.
    """

    __slots__ = ("_ptr", "_client", "_index", "_description")

    def __init__(self, ptr: int, client: Client) -> None:
        self._ptr = ptr
        self._client = client
        self._index = _out_size(lib.kiln_device_index, ptr)
        self._description = _out_string(lib.kiln_device_description, ptr)

    @property
    def _p(self) -> int:
        if self._client.closed:
            raise ValueError("kiln: the Device's client is closed")
        return self._ptr

    @property
    def client(self) -> Client:
        return self._client

    @property
    def index(self) -> int:
        """The device's position in ``client.devices``."""
        return self._index

    @property
    def description(self) -> str:
        return self._description

    def buffer(self, array: Any, *, dtype: Any = None, minor_to_major: Sequence[int] | None = None) -> Buffer:
        """Copies a host array to a new buffer on this device (as Client.buffer)."""
        host, et = host_array(array, dtype)
        if minor_to_major is not None and len(minor_to_major) != host.ndim:
            raise ValueError(f"kiln: minor_to_major needs {host.ndim} entries")
        out = ctypes.c_void_p()
        check(
            lib.kiln_device_buffer_from_host(
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
        return Buffer(out.value, self._client)

    def alias_host(
        self, array: np.ndarray, *, dtype: Any = None, on_release: Callable[[], Any] | None = None
    ) -> Buffer:
        """A buffer over `array` without copying where the device reads host memory in
        place (the "cpu" backend, for data aligned to its element type, as NumPy
        allocates arrays and slices them, a complex type to its parts' width; not
        bool: then ``buffer.is_host_alias``); elsewhere (other backends, misaligned
        data, bool) the data is copied now.

        The array (as converted to C order and native byte order, when it needed
        to be) is kept alive until the library releases it: once the buffer and
        every execution reading it are gone, or at once when it was copied. Do not
        change it meanwhile. ``on_release()`` is then called once, on any thread;
        it must not use the buffer."""
        if on_release is not None and not callable(on_release):
            raise TypeError(f"kiln: on_release must be callable, not {type(on_release).__name__}")
        host, et = host_array(array, dtype)
        ptr = self._p
        token = next(_tokens)
        _pending_releases[token] = (host, on_release)
        out = ctypes.c_void_p()
        # The library calls release (dropping the entry) on failure too.
        check(
            lib.kiln_device_buffer_alias_host(
                ptr,
                et,
                int64_array(host.shape),
                host.ndim,
                host.ctypes.data,
                host.nbytes,
                _on_host_release,
                token,
                ctypes.byref(out),
            )
        )
        return Buffer(out.value, self._client)

    def from_dlpack(self, obj: Any) -> Buffer:
        """A buffer on this device of `obj`, any object with ``__dlpack__`` (a NumPy
        array, a torch tensor, a kiln Buffer) or a DLPack capsule.

        Host memory (kDLCPU, kDLCUDAHost) that is C-contiguous is read in place where
        ``alias_host`` would read it (the "cpu" backend, data aligned to its element
        type, not bool: ``buffer.is_host_alias``), else copied now. GPU memory
        (kDLCUDA, e.g. a torch CUDA tensor) is read in place on the device of a
        "cuda" client whose ordinal is the tensor's; the producer is asked for
        stream 1 (the legacy default stream), which the import synchronises. The producer's
        tensor (which keeps its array alive) is released once the buffer and every
        execution reading it are gone, or at once when the data was copied or
        refused. Do not change the array meanwhile. Asks for DLPack 1.x
        (``max_version=(1, 0)``) and falls back to the legacy protocol for
        producers that do not take max_version. KilnError INVALID_ARGUMENT, with
        the library's message, for a non-contiguous array, a device this one cannot
        read (GPU memory on a host client, another GPU, kDLVulkan), or a dtype Kiln
        lacks."""
        capsule = obj
        if hasattr(obj, "__dlpack__"):
            request = {}
            device = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else None
            if device is not None and int(device[0]) == _dlpack.KDL_CUDA:
                # The import synchronises the legacy default stream: the producer
                # queues its pending writes there first.
                request["stream"] = _dlpack.CUDA_LEGACY_DEFAULT_STREAM
            try:
                capsule = obj.__dlpack__(max_version=_dlpack.MAX_VERSION, **request)
            except TypeError:  # a producer that predates DLPack 1.0 (no max_version)
                capsule = obj.__dlpack__(**request)
        ptr = self._p
        address, versioned = _dlpack.consume(capsule)
        # The library owns the tensor now and deletes it exactly once, failing or not.
        out = ctypes.c_void_p()
        load = (
            lib.kiln_device_buffer_from_dlpack_versioned if versioned else lib.kiln_device_buffer_from_dlpack
        )
        check(load(ptr, address, ctypes.byref(out)))
        return Buffer(out.value, self._client)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other._ptr == self._ptr

    def __hash__(self) -> int:
        return hash(self._ptr)

    def __str__(self) -> str:
        return self._description

    def __repr__(self) -> str:
        return f"<kiln.Device {self._index}: {self._description}>"


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
    rng_seed: int,
    timeout: float | None,
    cancellation: Cancellation | None,
    device: Device | None = None,
    donate: Iterable[int] = (),
) -> _ffi.ExecuteOptions:
    timeout_ns = 0
    if timeout is not None:
        if not timeout > 0:
            raise ValueError(f"kiln: timeout must be a positive number of seconds, got {timeout!r}")
        timeout_ns = max(1, min(int(timeout * 1e9), 2**63 - 1))
    if cancellation is not None and not isinstance(cancellation, Cancellation):
        raise TypeError(f"kiln: cancellation must be a kiln.Cancellation, not {type(cancellation).__name__}")
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"kiln: device must be a kiln.Device, not {type(device).__name__}")
    donated = [int(i) for i in donate]
    if any(i < 0 for i in donated):
        raise ValueError(f"kiln: donate takes argument indices >= 0, got {donated}")
    # Assigning the ctypes array to the pointer field keeps it alive with the struct.
    return _ffi.ExecuteOptions(
        ctypes.sizeof(_ffi.ExecuteOptions),
        rng_seed,
        timeout_ns,
        None if cancellation is None else cancellation._p,
        None if device is None else device._p,
        (ctypes.c_size_t * len(donated))(*donated) if donated else None,
        len(donated),
    )


class Executable(_ClientChild):
    """A computation compiled for a client. Thread-safe: it may run concurrently.

    ``exe(*args)`` takes NumPy arrays (or anything np.asarray accepts) and Buffers
    and returns NumPy arrays: one array for one result, else a tuple.
    ``exe.execute(args)`` returns the results as Buffers.
    ``exe.execute_async(args)`` returns the result Buffers at once and an Event.
    All take ``timeout`` (seconds; KilnError DEADLINE_EXCEEDED once it has
    passed) and ``cancellation`` (a Cancellation; KilnError CANCELLED once it
    is cancelled), which stop even a loop that never ends; ``device`` (a
    Device of the client: where to run, every argument must live there) and
    ``donate`` (indices of Buffer arguments the execution takes over: they may
    afterwards only be closed, anything else is KilnError FAILED_PRECONDITION).
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
        device: Device | None = None,
        donate: Iterable[int] = (),
    ) -> list[Buffer]:
        """Runs once; arguments are Buffers or host arrays (copied in for this call,
        to `device` when given)."""
        options = _execute_options(rng_seed, timeout, cancellation, device, donate)
        return self._with_buffers(arguments, device, lambda buffers: self._execute(buffers, options))

    def execute_async(
        self,
        arguments: Iterable[Any] = (),
        *,
        rng_seed: int = 0,
        timeout: float | None = None,
        cancellation: Cancellation | None = None,
        device: Device | None = None,
        donate: Iterable[int] = (),
    ) -> tuple[list[Buffer], Event]:
        """Starts one run without waiting: returns ``(results, event)``.

        The results' shapes are known at once; reading one (``to_numpy``, or an
        execution using it) waits until it is ready, so executions chain. It starts
        once every argument is ready. Errors in the arguments raise at once; a
        failure while running (a stop, a run-time error, a failed argument) is
        raised by ``event.wait()``, ``await event`` and by reading any result."""
        options = _execute_options(rng_seed, timeout, cancellation, device, donate)
        return self._with_buffers(arguments, device, lambda buffers: self._execute_async(buffers, options))

    def _with_buffers(self, arguments: Iterable[Any], device: Device | None, run: Callable[[list], Any]):
        """Calls run(buffers), host arguments copied to temporary buffers closed after."""
        arguments = list(arguments)
        temporaries: list[Buffer] = []
        target = self._client if device is None else device
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
                temp = target.buffer(arg, dtype=dtype)
                temporaries.append(temp)
                buffers.append(temp)
            return run(buffers)
        finally:
            # An asynchronous execution keeps what it needs of its arguments.
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

    def _execute_async(
        self, buffers: Sequence[Buffer], options: _ffi.ExecuteOptions
    ) -> tuple[list[Buffer], Event]:
        args = (ctypes.c_void_p * max(len(buffers), 1))(*[b._p for b in buffers])
        capacity = self._num_results
        results = (ctypes.c_void_p * max(capacity, 1))()
        count = ctypes.c_size_t()
        event = ctypes.c_void_p()
        check(
            lib.kiln_executable_execute_async(
                self._p,
                args,
                len(buffers),
                ctypes.byref(options),
                results,
                capacity,
                ctypes.byref(count),
                ctypes.byref(event),
            )
        )
        return [Buffer(results[i], self._client) for i in range(count.value)], Event(event.value)

    def __call__(
        self,
        *arguments: Any,
        rng_seed: int = 0,
        timeout: float | None = None,
        cancellation: Cancellation | None = None,
        device: Device | None = None,
        donate: Iterable[int] = (),
    ) -> np.ndarray | tuple[np.ndarray, ...]:
        outputs = []
        results = self.execute(
            arguments,
            rng_seed=rng_seed,
            timeout=timeout,
            cancellation=cancellation,
            device=device,
            donate=donate,
        )
        for result in results:
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

    def __init__(self, backend: str | None = None, *, num_devices: int = 0) -> None:
        """Opens `backend` ("interpreter", "cpu", ...); None picks the default.
        `num_devices`: 0 is the backend's own count; the host backends ("cpu",
        "interpreter") split the machine into that many devices (at most 64)."""
        self._children: weakref.WeakSet = weakref.WeakSet()
        options = _ffi.ClientOptions(
            ctypes.sizeof(_ffi.ClientOptions), None if backend is None else backend.encode(), num_devices
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
    def devices(self) -> list[Device]:
        """The client's devices, in order (``str(device)`` is its description)."""
        count = _out_size(lib.kiln_client_device_count, self._p)
        return [self.device(i) for i in range(count)]

    def device(self, index: int) -> Device:
        """Device `index` (KilnError OUT_OF_RANGE past the end)."""
        out = ctypes.c_void_p()
        check(lib.kiln_client_device(self._p, index, ctypes.byref(out)))
        return Device(out.value, self)

    def buffer(self, array: Any, *, dtype: Any = None, minor_to_major: Sequence[int] | None = None) -> Buffer:
        """Copies a host array (anything np.asarray accepts) to a new buffer on the
        client's first device. `dtype` converts it first; `minor_to_major` sets the
        device layout. ``client.devices[i].buffer(...)`` places it elsewhere."""
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

    def from_dlpack(self, obj: Any) -> Buffer:
        """A buffer on the client's first device of a DLPack producer (see
        Device.from_dlpack)."""
        return self.device(0).from_dlpack(obj)

    def buffer_from_npy(self, path: str | os.PathLike, element_type: Any = None) -> Buffer:
        """Reads a .npy file into a new buffer. Pass element_type="bf16" for
        bf16 data saved as 'V2'."""
        et = ElementType.INVALID if element_type is None else _element_type(element_type)
        out = ctypes.c_void_p()
        check(lib.kiln_client_buffer_from_npy_file(self._p, os.fsencode(path), et, ctypes.byref(out)))
        return Buffer(out.value, self)

    def compile(
        self,
        computation: Computation,
        *,
        optimization_level: int = 2,
        num_threads: int = 0,
        allow_unsafe_nan_math: bool = False,
    ) -> Executable:
        """Compiles `computation` for this client's backend.

        allow_unsafe_nan_math=True compiles a computation whose results depend
        on NaN or infinities even for a device whose driver may assume there
        are none (vulkan without float controls), which refuses it otherwise:
        such results may then be wrong."""
        if not isinstance(computation, Computation):
            raise TypeError(f"kiln: compile needs a Computation, not {type(computation).__name__}")
        if not isinstance(allow_unsafe_nan_math, bool):
            raise TypeError(
                "kiln: compile's allow_unsafe_nan_math must be a bool, not "
                f"{type(allow_unsafe_nan_math).__name__}"
            )
        options = _ffi.CompileOptions(
            ctypes.sizeof(_ffi.CompileOptions), optimization_level, num_threads, int(allow_unsafe_nan_math)
        )
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

#: Backends whose buffers live in host memory (DLPack export without a copy).
_HOST_BACKENDS = ("cpu", "interpreter")

_default_client: Client | None = None
_default_client_lock = threading.Lock()


def _default_device() -> Device:
    """The first device of a process-wide client on "cpu" (else the default
    backend), opened on first use and kept until the interpreter exits."""
    global _default_client
    with _default_client_lock:
        if _default_client is None or _default_client.closed:
            _default_client = Client("cpu" if "cpu" in backends() else None)
        return _default_client.device(0)


def from_dlpack(obj: Any, *, device: Device | Client | None = None) -> Buffer:
    """A kiln Buffer of `obj`, any DLPack producer (an object with ``__dlpack__``:
    a NumPy array, a torch tensor, ...) or a DLPack capsule, on `device` (a Device,
    or a Client for its first device; None is the first device of a process-wide
    "cpu" client). Zero-copy where the device reads host memory in place: see
    Device.from_dlpack."""
    if device is None:
        device = _default_device()
    elif isinstance(device, Client):
        device = device.device(0)
    elif not isinstance(device, Device):
        raise TypeError(f"kiln: device must be a kiln.Device or kiln.Client, not {type(device).__name__}")
    return device.from_dlpack(obj)
