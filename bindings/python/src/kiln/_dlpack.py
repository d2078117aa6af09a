"""DLPack's structs and PyCapsules: the Python side of kiln.h's DLPack functions.

The Python DLPack protocol passes a ``DLManagedTensorVersioned*`` (capsule name
"dltensor_versioned", DLPack >= 1.0) or a ``DLManagedTensor*`` ("dltensor",
the legacy struct) in a PyCapsule. Whoever consumes the capsule renames it to
"used_dltensor_versioned" / "used_dltensor" and from then on owns the tensor
(calls its deleter once); a capsule that dies unconsumed deletes its tensor in
its destructor. This module is private.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    PYFUNCTYPE,
    Structure,
    c_char_p,
    c_int,
    c_int32,
    c_int64,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
    py_object,
)
from typing import Any

#: DLDeviceType values the binding meets (dlpack.h).
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_VULKAN = 7

#: The ``stream`` a consumer of CUDA memory passes to ``__dlpack__`` (DLPack's
#: Python specification): 1 is the legacy default stream, 2 the per-thread
#: default stream, -1 asks for no synchronisation, a larger integer is a
#: cudaStream_t; 0 is disallowed as ambiguous.
CUDA_LEGACY_DEFAULT_STREAM = 1
CUDA_DISALLOWED_STREAM = 0

#: DLManagedTensorVersioned.flags bits.
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1

#: The newest DLPack version this binding speaks (as ``max_version`` to producers).
MAX_VERSION = (1, 0)


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


# The deleters, as plain addresses: they are called through _DELETER_FN.
class DLManagedTensor(Structure):
    """The pre-1.0 struct (capsule name "dltensor")."""

    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLManagedTensorVersioned(Structure):
    """The DLPack 1.x struct (capsule name "dltensor_versioned")."""

    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


#: void (*deleter)(DLManagedTensor[Versioned]* self). Called like any C function:
#: the GIL is released meanwhile (a Python producer's deleter takes it itself).
_DELETER_FN = CFUNCTYPE(None, c_void_p)

# Capsule names. A capsule keeps the pointer to its name, not a copy, so these
# bytes objects are made immortal below: they outlive every capsule.
VERSIONED = b"dltensor_versioned"
LEGACY = b"dltensor"
USED_VERSIONED = b"used_dltensor_versioned"
USED_LEGACY = b"used_dltensor"

# The capsule C API through private prototypes (never by setting argtypes on the
# shared ctypes.pythonapi attributes, which other code may set differently).
# PYFUNCTYPE keeps the GIL held and raises the Python error a call sets.
_api = ctypes.pythonapi
_PyCapsule_New = PYFUNCTYPE(py_object, c_void_p, c_char_p, c_void_p)(("PyCapsule_New", _api))
_PyCapsule_IsValid = PYFUNCTYPE(c_int, py_object, c_char_p)(("PyCapsule_IsValid", _api))
_PyCapsule_GetPointer = PYFUNCTYPE(c_void_p, py_object, c_char_p)(("PyCapsule_GetPointer", _api))
_PyCapsule_SetName = PYFUNCTYPE(c_int, py_object, c_char_p)(("PyCapsule_SetName", _api))
_PyCapsule_GetName = PYFUNCTYPE(c_char_p, py_object)(("PyCapsule_GetName", _api))
# In the destructor the capsule is being deallocated (reference count 0): it is
# passed as a bare address so that ctypes never touches its reference count.
_PyCapsule_IsValid_raw = PYFUNCTYPE(c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", _api))
_PyCapsule_GetPointer_raw = PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _api))
_Py_IncRef = PYFUNCTYPE(None, py_object)(("Py_IncRef", _api))

for _name in (VERSIONED, LEGACY, USED_VERSIONED, USED_LEGACY):
    _Py_IncRef(_name)  # immortal: a capsule may still name it at interpreter exit


def _call_deleter(address: int, versioned: bool) -> None:
    """Calls the deleter (if any) of the tensor at `address`, a DLManagedTensorVersioned
    or a DLManagedTensor: the deleter lies at different offsets in the two."""
    struct = DLManagedTensorVersioned if versioned else DLManagedTensor
    deleter = struct.from_address(address).deleter
    if deleter:
        _DELETER_FN(deleter)(address)


_PyErr_Occurred = PYFUNCTYPE(c_void_p)(("PyErr_Occurred", _api))


@CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule: int) -> None:
    """PyCapsule_Destructor of the capsules Buffer.__dlpack__ returns: deletes the
    tensor unless a consumer took it (renamed the capsule "used_...").

    A consumer written in C may drop the capsule while its own error is pending
    (NumPy does when it refuses a dtype). A ctypes callback cannot leave that
    error in place (ctypes reports any error still set when it returns), so the
    error is taken here, the tensor deleted all the same, and the error raised
    again: ctypes prints it as unraisable, and the consumer ends in SystemError."""
    pending = None
    try:
        # PYFUNCTYPE raises the error pending when the call returns: that takes it.
        _PyErr_Occurred()
    except BaseException as error:  # noqa: BLE001 - any pending error, to report below
        pending = error
    for name, versioned in ((VERSIONED, True), (LEGACY, False)):
        if _PyCapsule_IsValid_raw(capsule, name):
            _call_deleter(_PyCapsule_GetPointer_raw(capsule, name), versioned)
            break
    if pending is not None:
        raise pending


# The destructor's C address, as PyCapsule_New takes it. The callback object above
# is a module global: it lives as long as the process.
_DESTRUCTOR = ctypes.cast(_capsule_destructor, c_void_p).value


def new_capsule(address: int, versioned: bool) -> Any:
    """A capsule owning the tensor at `address`; if the call fails the tensor is deleted."""
    try:
        return _PyCapsule_New(address, VERSIONED if versioned else LEGACY, _DESTRUCTOR)
    except BaseException:
        _call_deleter(address, versioned)
        raise


def capsule_name(capsule: Any) -> bytes | None:
    """The capsule's name (None when it has none); TypeError for a non-capsule."""
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"kiln: expected a DLPack PyCapsule, got {type(capsule).__name__}")
    return _PyCapsule_GetName(capsule)


def consume(capsule: Any) -> tuple[int, bool]:
    """Takes the tensor out of a DLPack capsule: returns (address, versioned) and
    renames the capsule "used_...", so that from now on the caller owns the tensor.
    BufferError for a capsule that is used already or not a DLPack capsule."""
    name = capsule_name(capsule)
    if name in (VERSIONED, LEGACY):
        versioned = name == VERSIONED
        address = _PyCapsule_GetPointer(capsule, name)
        if not address:
            raise BufferError("kiln: the DLPack capsule holds a NULL tensor")
        # Renamed before anything can fail: the capsule no longer deletes it.
        _PyCapsule_SetName(capsule, USED_VERSIONED if versioned else USED_LEGACY)
        return address, versioned
    if name in (USED_VERSIONED, USED_LEGACY):
        raise BufferError("kiln: the DLPack capsule was consumed already")
    raise BufferError(f"kiln: not a DLPack capsule (named {name!r})")


def tensor_of(capsule: Any) -> DLTensor:
    """The DLTensor of an unconsumed capsule, for inspection (the capsule must live
    while it is used)."""
    name = capsule_name(capsule)
    if name not in (VERSIONED, LEGACY):
        raise BufferError(f"kiln: not an unconsumed DLPack capsule (named {name!r})")
    address = _PyCapsule_GetPointer(capsule, name)
    struct = DLManagedTensorVersioned if name == VERSIONED else DLManagedTensor
    return struct.from_address(address).dl_tensor


def flags_of(capsule: Any) -> int:
    """The flags of an unconsumed versioned capsule's tensor."""
    address = _PyCapsule_GetPointer(capsule, VERSIONED)
    return DLManagedTensorVersioned.from_address(address).flags


def version_of(capsule: Any) -> tuple[int, int]:
    """The DLPack version of an unconsumed versioned capsule's tensor."""
    address = _PyCapsule_GetPointer(capsule, VERSIONED)
    version = DLManagedTensorVersioned.from_address(address).version
    return version.major, version.minor


def mark_copied(capsule: Any) -> None:
    """Sets DLPACK_FLAG_BITMASK_IS_COPIED on a versioned capsule's tensor (one made
    from a fresh copy, before it is handed out)."""
    if capsule_name(capsule) == VERSIONED:
        address = _PyCapsule_GetPointer(capsule, VERSIONED)
        DLManagedTensorVersioned.from_address(address).flags |= FLAG_IS_COPIED
