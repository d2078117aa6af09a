"""Arrays in and out: every element type, dtype and shape checks, layouts."""

import numpy as np
import pytest

import kiln
from kiln import ElementType

DTYPES = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128,
]  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(client, dtype):
    array = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    with client.buffer(array) as buffer:
        assert buffer.dtype == np.dtype(dtype)
        assert buffer.shape == (2, 3) and buffer.ndim == 2
        assert buffer.nbytes == array.nbytes
        np.testing.assert_array_equal(buffer.to_numpy(), array)


def test_scalars_non_contiguous_and_big_endian(client):
    with client.buffer(np.float64(2.5)) as scalar:
        assert scalar.shape == () and scalar.to_numpy() == 2.5
    strided = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    with client.buffer(strided) as buffer:
        np.testing.assert_array_equal(buffer.to_numpy(), strided)
    big = np.arange(4, dtype=">f4")
    with client.buffer(big) as buffer:
        assert buffer.dtype == np.float32
        np.testing.assert_array_equal(buffer.to_numpy(), big)
    with client.buffer([1, 2, 3], dtype="s8") as buffer:
        assert buffer.element_type == ElementType.S8


def test_layout_and_out_array(client):
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    with client.buffer(array, minor_to_major=[0, 1]) as buffer:
        assert buffer.minor_to_major == (0, 1)
        out = np.empty((2, 3), np.float32)
        assert buffer.to_numpy(out=out) is out
        np.testing.assert_array_equal(out, array)


def test_element_type_names():
    assert ElementType.F32.hlo_name == "f32"
    assert ElementType.F64.byte_width == 8
    assert ElementType.F32.dtype == np.float32
    with pytest.raises(TypeError):
        _ = ElementType.TUPLE.dtype


def test_bf16(client, monkeypatch):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    array = np.array([1.5, -2.0, 3.0], dtype=ml_dtypes.bfloat16)
    with client.buffer(array) as buffer:
        assert buffer.element_type == ElementType.BF16
        np.testing.assert_array_equal(buffer.to_numpy(), array)
    # Without ml_dtypes, bf16 is refused with a clear message.
    from kiln import _types

    monkeypatch.delitem(_types._TO_NUMPY, ElementType.BF16)
    with pytest.raises(TypeError, match="ml_dtypes"):
        _ = ElementType.BF16.dtype


def test_builder_constants_iota_and_reductions(client):
    with kiln.Builder("sum") as s:
        s.add(s.parameter(0, "f32", []), s.parameter(1, "f32", []))
        add = s.build()
    with kiln.Builder("main") as b:
        iota = b.iota("f32", [2, 3], 1)
        c = b.constant(np.array([[1, 2, 3], [4, 5, 6]], np.float32))
        total = b.reduce(b.mul(iota, c), b.constant_f32(0), add, [1])
        computation = b.build(b.tuple([total, b.transpose(c, [1, 0])]))
    with add, computation, client.compile(computation) as exe:
        assert exe.result_count == 2
        total, transposed = exe()
    np.testing.assert_allclose(total, [8, 17])
    np.testing.assert_array_equal(transposed, [[1, 4], [2, 5], [3, 6]])
