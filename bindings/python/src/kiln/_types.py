"""Element types and their NumPy dtypes, and the small enums of kiln.h."""

from __future__ import annotations

import ctypes
import enum
from typing import Any, Sequence

import numpy as np

from ._ffi import lib

try:  # bf16 has no NumPy dtype of its own; ml_dtypes provides one.
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None


class ElementType(enum.IntEnum):
    """Element types as XLA names them (KILN_TYPE_*)."""

    INVALID = 0
    PRED = 1
    S8 = 2
    S16 = 3
    S32 = 4
    S64 = 5
    U8 = 6
    U16 = 7
    U32 = 8
    U64 = 9
    F16 = 10
    BF16 = 11
    F32 = 12
    F64 = 13
    C64 = 14
    C128 = 15
    TUPLE = 16
    TOKEN = 17

    @property
    def hlo_name(self) -> str:
        """The lower-case HLO name, e.g. "f32"."""
        return lib.kiln_element_type_name(self).decode()

    @property
    def byte_width(self) -> int:
        """Bytes per element (0 for TUPLE, TOKEN and INVALID)."""
        return lib.kiln_element_type_byte_width(self)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of this element type (TypeError when there is none)."""
        return to_dtype(self)


class ComparisonDirection(enum.IntEnum):
    EQ = 0
    NE = 1
    GE = 2
    GT = 3
    LE = 4
    LT = 5


class ComparisonType(enum.IntEnum):
    DEFAULT = 0
    FLOAT = 1
    TOTAL_ORDER = 2
    SIGNED = 3
    UNSIGNED = 4


class Padding(enum.IntEnum):
    VALID = 0
    SAME = 1


class Precision(enum.IntEnum):
    """XLA's operand precision of a dot or convolution (kiln_precision_t)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


class RngAlgorithm(enum.IntEnum):
    DEFAULT = 0
    THREE_FRY = 1
    PHILOX = 2


class FftType(enum.IntEnum):
    """The transform of Builder.fft (kiln_fft_type_t, XLA's FftType)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


_TO_NUMPY = {
    ElementType.PRED: np.dtype(np.bool_),
    ElementType.S8: np.dtype(np.int8),
    ElementType.S16: np.dtype(np.int16),
    ElementType.S32: np.dtype(np.int32),
    ElementType.S64: np.dtype(np.int64),
    ElementType.U8: np.dtype(np.uint8),
    ElementType.U16: np.dtype(np.uint16),
    ElementType.U32: np.dtype(np.uint32),
    ElementType.U64: np.dtype(np.uint64),
    ElementType.F16: np.dtype(np.float16),
    ElementType.F32: np.dtype(np.float32),
    ElementType.F64: np.dtype(np.float64),
    ElementType.C64: np.dtype(np.complex64),
    ElementType.C128: np.dtype(np.complex128),
}
if _ml_dtypes is not None:
    _TO_NUMPY[ElementType.BF16] = np.dtype(_ml_dtypes.bfloat16)

_FROM_NUMPY = {dt: et for et, dt in _TO_NUMPY.items()}
_BY_NAME = {et.name.lower(): et for et in ElementType}

_BF16_MISSING = "bf16 arrays need the ml_dtypes package (pip install ml_dtypes)"


def to_dtype(element_type: ElementType) -> np.dtype:
    try:
        return _TO_NUMPY[element_type]
    except KeyError:
        if element_type == ElementType.BF16:
            raise TypeError(_BF16_MISSING) from None
        raise TypeError(f"kiln: {ElementType(element_type).name} has no NumPy dtype") from None


def element_type(value: Any) -> ElementType:
    """ElementType of an ElementType, an HLO name ("f32"), or a NumPy dtype/type."""
    if isinstance(value, ElementType):
        return value
    if isinstance(value, str) and value.lower() in _BY_NAME:
        return _BY_NAME[value.lower()]
    if isinstance(value, int) and not isinstance(value, bool):
        return ElementType(value)
    if isinstance(value, str) and value.lower() == "bfloat16" and _ml_dtypes is None:
        raise TypeError(_BF16_MISSING)
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"kiln: not an element type: {value!r}") from None
    try:
        return _FROM_NUMPY[dtype.newbyteorder("=")]
    except KeyError:
        raise TypeError(f"kiln: NumPy dtype {dtype} has no kiln element type") from None


def host_array(value: Any, dtype: Any = None) -> tuple[np.ndarray, ElementType]:
    """A C-contiguous, native-byte-order array of `value` and its element type."""
    array = np.asarray(value, dtype=None if dtype is None else to_dtype(element_type(dtype)))
    et = element_type(array.dtype)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return array, et


def int64_array(values: Sequence[int] | None):
    """A ctypes int64 array of `values`, or None for None/empty."""
    if values is None:
        return None
    values = [int(v) for v in values]
    return (ctypes.c_int64 * len(values))(*values) if values else None
