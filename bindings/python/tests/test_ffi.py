"""The ctypes declarations match kiln.h, and the Builder covers every op."""

import ctypes
import re

import pytest

import kiln
from conftest import HEADER
from kiln import _ffi


def header_functions():
    if not HEADER.is_file():
        pytest.skip(f"{HEADER} is not in this checkout")
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    functions = {}
    for match in re.finditer(r"^KILN_API\s+([^;]*?)\b(kiln_\w+)\s*\(([^)]*)\)\s*;", text, re.M | re.S):
        params = [p for p in match.group(3).split(",") if p.strip() not in ("", "void")]
        functions[match.group(2)] = (match.group(1).strip(), len(params))
    return functions


def test_every_function_is_declared_with_its_arity():
    functions = header_functions()
    assert len(functions) > 100
    assert set(_ffi.FUNCTIONS) == set(functions)
    for name, (ret, arity) in functions.items():
        restype, argtypes = _ffi.FUNCTIONS[name]
        assert len(argtypes) == arity, name
        if ret == "void":
            assert restype is None, name
        elif ret == "kiln_status_t*":
            assert restype is ctypes.c_void_p, name
        elif ret == "kiln_op_t":
            assert restype is ctypes.c_int64, name


def test_struct_sizes_follow_the_header_layout():
    # Every option struct is size_t + fields; on LP64 each list is (pointer, size_t).
    assert ctypes.sizeof(_ffi.ClientOptions) == 24  # 0.2 appended num_devices (int32, padded)
    assert ctypes.sizeof(_ffi.CompileOptions) == 24  # 0.2 appended allow_unsafe_nan_math (int32, padded)
    assert ctypes.sizeof(_ffi.ExecuteOptions) == 56  # 0.2: device, donated_arguments + count
    assert ctypes.sizeof(_ffi.DotDimensionNumbers) == 8 + 4 * 16
    assert ctypes.sizeof(_ffi.GatherDimensionNumbers) == 8 + 5 * 16 + 8
    assert ctypes.sizeof(_ffi.ScatterDimensionNumbers) == 8 + 5 * 16 + 8
    assert ctypes.sizeof(_ffi.ConvDimensionNumbers) == 11 * 8


def test_builder_mirrors_every_op():
    ops = [name[len("kiln_op_") :] for name in header_functions() if name.startswith("kiln_op_")]
    renamed = {"and": "and_", "or": "or_", "not": "not_", "while": "while_"}
    missing = [op for op in ops if not hasattr(kiln.Builder, renamed.get(op, op))]
    assert not missing


def test_version():
    assert kiln.version().count(".") == 2
    major, minor, patch = map(int, kiln.version().split("."))
    assert kiln.version_number() == major * 10000 + minor * 100 + patch
    assert "interpreter" in kiln.backends()
