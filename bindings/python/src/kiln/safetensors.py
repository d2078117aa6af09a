"""Safetensors files (Hugging Face's format for weights), read and written by libkiln.

::

    import numpy as np, kiln

    kiln.safetensors.save("w.safetensors", {"w": np.ones((2, 2), np.float32)}, metadata={"format": "pt"})
    weights = kiln.safetensors.load("w.safetensors")  # {"w": kiln.Buffer}
    with kiln.safetensors.open("w.safetensors") as f:
        print(f.names, f.metadata("format"))
        w = f.read("w")

The library parses and checks the files (kiln_safetensors_* in kiln.h): a
malformed file raises KilnError INVALID_ARGUMENT (bad JSON, unknown dtype,
overlapping ranges, ...) or DATA_LOSS (truncated) with the library's message;
a missing file or unknown tensor name NOT_FOUND. dtypes: BOOL, U8..U64,
I8..I64, F16, BF16 (NumPy arrays need ml_dtypes), F32, F64, C64.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Iterable, Iterator, Mapping

from . import _ffi
from ._errors import StatusCode, check
from ._ffi import lib
from ._handle import Handle
from ._runtime import Buffer, Client, Device, _default_device

__all__ = ["SafetensorsFile", "load", "open", "save"]

_MISSING: Any = object()


def _c_string(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"kiln: {what} must be a str, not {type(value).__name__}")
    if "\0" in value:
        raise ValueError(f"kiln: {what} {value!r} contains a NUL character")
    return value.encode("utf-8")


def _device_of(device: Device | Client | None) -> Device:
    if device is None:
        return _default_device()
    if isinstance(device, Client):
        return device.device(0)
    if not isinstance(device, Device):
        raise TypeError(f"kiln: device must be a kiln.Device or kiln.Client, not {type(device).__name__}")
    return device


def _borrowed_string(call, *args) -> str:
    out = ctypes.c_char_p()
    check(call(*args, ctypes.cast(ctypes.byref(out), _ffi._PP)))
    return out.value.decode("utf-8")


class SafetensorsFile(Handle):
    """A safetensors file opened for reading (``kiln.safetensors.open(path)``): its
    header was read and checked once; tensors are read by name into new Buffers.

    ``names`` lists the tensors in the order of their data; ``len(f)``,
    ``name in f`` and ``for name in f`` follow it. A context manager; ``close()``
    frees it (Buffers read from it stay valid). Safe to share between threads
    (calls on one file take turns)."""

    __slots__ = ("_names", "_path", "_lock")
    _destroy = lib.kiln_safetensors_destroy

    def __init__(self, path: str | os.PathLike) -> None:
        self._lock = threading.Lock()
        self._path = os.fspath(path)
        out = ctypes.c_void_p()
        check(lib.kiln_safetensors_open(os.fsencode(path), ctypes.byref(out)))
        super().__init__(out.value)
        count = ctypes.c_size_t()
        check(lib.kiln_safetensors_tensor_count(self._p, ctypes.byref(count)))
        self._names = tuple(
            _borrowed_string(lib.kiln_safetensors_tensor_name, self._p, i) for i in range(count.value)
        )

    @property
    def path(self) -> str:
        return self._path

    @property
    def names(self) -> list[str]:
        """The tensors' names, in the order of their data in the file."""
        return list(self._names)

    def keys(self) -> list[str]:
        """Same as ``names``."""
        return list(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def metadata(self, key: str, default: Any = _MISSING) -> str:
        """The value of metadata entry `key` (the header's "__metadata__"): `default`
        when the file has none by that name and one is given, else KilnError NOT_FOUND."""
        key_bytes = _c_string(key, "metadata key")
        with self._lock:
            out = ctypes.c_char_p()
            status = lib.kiln_safetensors_metadata(
                self._p, key_bytes, ctypes.cast(ctypes.byref(out), _ffi._PP)
            )
            if status and default is not _MISSING and lib.kiln_status_code(status) == StatusCode.NOT_FOUND:
                lib.kiln_status_destroy(status)
                return default
            check(status)
            return out.value.decode("utf-8")

    def read(self, name: str, device: Device | Client | None = None) -> Buffer:
        """Reads tensor `name` into a new Buffer on `device` (a Device, a Client for its
        first device, None for the first device of a process-wide "cpu" client).
        KilnError NOT_FOUND, listing the file's tensors, for an unknown name."""
        name_bytes = _c_string(name, "tensor name")
        target = _device_of(device)
        with self._lock:
            out = ctypes.c_void_p()
            check(lib.kiln_safetensors_read(self._p, target._p, name_bytes, ctypes.byref(out)))
        return Buffer(out.value, target.client)

    def close(self) -> None:
        """Frees the file (Buffers read from it stay valid). Again does nothing."""
        with self._lock:
            super().close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self._names)} tensors"
        return f"<kiln.safetensors.SafetensorsFile {self._path!r}: {state}>"


def open(path: str | os.PathLike) -> SafetensorsFile:
    """Opens a safetensors file and checks its header (KilnError NOT_FOUND when it
    cannot be opened, INVALID_ARGUMENT or DATA_LOSS when it is malformed)."""
    return SafetensorsFile(path)


def load(path: str | os.PathLike, device: Device | Client | None = None) -> dict[str, Buffer]:
    """Every tensor of a safetensors file, ``{name: Buffer}`` in the order of their
    data, on `device` (see SafetensorsFile.read)."""
    target = _device_of(device)
    buffers: dict[str, Buffer] = {}
    with SafetensorsFile(path) as file:
        try:
            for name in file.names:
                buffers[name] = file.read(name, target)
        except BaseException:
            for buffer in buffers.values():
                buffer.close()
            raise
    return buffers


def save(
    path: str | os.PathLike,
    tensors: Mapping[str, Any] | Iterable[tuple[str, Any]],
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Writes `tensors` ({name: Buffer or array}, or (name, value) pairs; data in
    that order) to `path` as a safetensors file, with `metadata` (str to str) as its
    "__metadata__". Arrays (anything np.asarray accepts) are copied to a temporary
    buffer first; Buffers are written once ready. KilnError INVALID_ARGUMENT for a
    name given twice or "__metadata__", or an element type the format lacks (c128);
    NOT_FOUND when the file cannot be created."""
    items = list(tensors.items() if isinstance(tensors, Mapping) else tensors)
    entries = list((metadata or {}).items())
    names = [_c_string(name, "tensor name") for name, _ in items]
    keys = [_c_string(key, "metadata key") for key, _ in entries]
    values = [_c_string(value, f"metadata value of {key!r}") for key, value in entries]
    temporaries: list[Buffer] = []
    try:
        buffers = []
        for _, value in items:
            if not isinstance(value, Buffer):
                value = _default_device().buffer(value)
                temporaries.append(value)
            buffers.append(value._p)
        check(
            lib.kiln_safetensors_write_file(
                os.fsencode(path),
                ctypes.cast((ctypes.c_char_p * max(len(names), 1))(*names), _ffi._PP),
                (ctypes.c_void_p * max(len(buffers), 1))(*buffers),
                len(buffers),
                ctypes.cast((ctypes.c_char_p * max(len(keys), 1))(*keys), _ffi._PP),
                ctypes.cast((ctypes.c_char_p * max(len(values), 1))(*values), _ffi._PP),
                len(entries),
            )
        )
    finally:
        for temp in temporaries:
            temp.close()
