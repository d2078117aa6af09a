"""kiln.safetensors: round trips, a file written to the format by hand, malformed
files refused with the library's codes and messages, and interop with the
`safetensors` package when it is installed."""

import json
import struct

import numpy as np
import pytest

import kiln
from kiln import KilnError, StatusCode

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None

try:
    import safetensors
    import safetensors.numpy
except ImportError:  # pragma: no cover - depends on the environment
    safetensors = None

needs_safetensors = pytest.mark.skipif(
    safetensors is None,
    reason="the safetensors package is not installed (pip install safetensors; ci.sh installs it)",
)


def write_by_hand(path, header, data=b"", size_delta=0):
    """The format: an 8-byte little-endian header size, the JSON header, the data."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text) + size_delta) + text + data)
    return path


def sample_tensors():
    tensors = {
        "layer.weight": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
        "mask": np.array([True, False, False, True]),
        "step": np.array(-7, dtype=np.int64),
        "bytes": np.array([0, 1, 255], dtype=np.uint8),
        "half": np.array([[1.5], [-2.25]], dtype=np.float16),
        "wide": np.array([1e300, -0.0], dtype=np.float64),
        "small": np.array([-128, 127], dtype=np.int8),
        "big": np.array([2**64 - 1], dtype=np.uint64),
        "complex": np.array([1 + 2j, -3j], dtype=np.complex64),
        "empty": np.zeros((0, 3), dtype=np.int32),
    }
    if ml_dtypes is not None:
        tensors["scale"] = np.array([1.0, -2.0, 0.5], dtype=ml_dtypes.bfloat16)
    return tensors


def assert_same(buffer, expected):
    got = buffer.to_numpy()
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_round_trip_of_several_dtypes_with_metadata(tmp_path):
    tensors = sample_tensors()
    path = tmp_path / "round_trip.safetensors"
    with kiln.Client("interpreter") as client:
        # Buffers and arrays may be mixed; the Buffer here lives on another client.
        weight = client.buffer(tensors["layer.weight"])
        kiln.safetensors.save(
            path, {**tensors, "layer.weight": weight}, metadata={"format": "pt", "written_by": "kiln"}
        )
    with kiln.safetensors.open(path) as f:
        assert f.names == list(tensors)  # in the order given, which is the order of the data
        assert len(f) == len(tensors) and "mask" in f and "nope" not in f
        assert list(f) == list(tensors)
        assert f.metadata("format") == "pt"
        assert f.metadata("written_by") == "kiln"
        for name, expected in tensors.items():
            with f.read(name) as buffer:
                assert_same(buffer, expected)
        with f.read("step") as step:
            assert step.shape == () and step.element_type == kiln.ElementType.S64
        with f.read("mask") as mask:
            assert mask.element_type == kiln.ElementType.PRED
    assert f.closed
    loaded = kiln.safetensors.load(path)
    assert list(loaded) == list(tensors)
    for name, expected in tensors.items():
        assert_same(loaded[name], expected)
        loaded[name].close()


@pytest.mark.skipif(ml_dtypes is None, reason="bf16 arrays need ml_dtypes")
def test_bf16_round_trips_bit_exact(tmp_path):
    bits = np.array([0x3F80, 0xC000, 0x7F80, 0x0001], dtype=np.uint16)
    path = tmp_path / "bf16.safetensors"
    kiln.safetensors.save(path, {"scale": bits.view(ml_dtypes.bfloat16)})
    header_size = struct.unpack("<Q", path.read_bytes()[:8])[0]
    header = json.loads(path.read_bytes()[8 : 8 + header_size])
    assert header["scale"]["dtype"] == "BF16"
    with kiln.safetensors.load(path)["scale"] as back:
        assert back.element_type == kiln.ElementType.BF16
        np.testing.assert_array_equal(back.to_numpy().view(np.uint16), bits)


def test_reads_a_file_written_by_hand(tmp_path):
    weight = np.array([[1.5, -2.0], [3.25, 0.0]], dtype="<f4")
    count = np.array(123456789012, dtype="<i8")
    header = {
        "__metadata__": {"format": "pt", "note": "by hand"},
        # Names in the header need not follow the order of the data.
        "flags": {"dtype": "BOOL", "shape": [3], "data_offsets": [24, 27]},
        "weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
        "count": {"dtype": "I64", "shape": [], "data_offsets": [16, 24]},
    }
    data = weight.tobytes() + count.tobytes() + bytes([1, 0, 7])  # any non-zero byte is true
    path = write_by_hand(tmp_path / "by_hand.safetensors", header, data)
    with kiln.safetensors.open(path) as f:
        assert f.names == ["weight", "count", "flags"]
        assert f.metadata("note") == "by hand"
        with f.read("weight") as w:
            assert_same(w, weight.astype(np.float32))
        with f.read("count") as c:
            assert c.to_numpy() == 123456789012 and c.shape == ()
        with f.read("flags") as flags:
            assert_same(flags, np.array([True, False, True]))


def test_reads_onto_the_given_device(tmp_path):
    path = tmp_path / "device.safetensors"
    kiln.safetensors.save(path, [("x", np.arange(4, dtype=np.int32))])
    with kiln.Client("cpu", num_devices=2) as client:
        second = client.devices[1]
        with kiln.safetensors.open(path) as f, f.read("x", second) as x:
            assert x.device == second
            assert x.client is client
            assert_same(x, np.arange(4, dtype=np.int32))
        buffers = kiln.safetensors.load(path, device=client)
        assert buffers["x"].device == client.devices[0]
        with pytest.raises(TypeError, match="kiln.Device or kiln.Client"):
            kiln.safetensors.load(path, device="cpu")


def test_buffers_outlive_the_file(tmp_path):
    path = tmp_path / "outlive.safetensors"
    kiln.safetensors.save(path, {"x": np.ones(3, np.float32)})
    f = kiln.safetensors.open(path)
    x = f.read("x")
    f.close()
    f.close()
    assert_same(x, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="closed"):
        f.read("x")
    assert "closed" in repr(f)


def test_a_buffer_with_a_column_major_layout_is_written_row_major(tmp_path):
    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    path = tmp_path / "layout.safetensors"
    with kiln.Client("cpu") as client, client.buffer(matrix, minor_to_major=[0, 1]) as column_major:
        assert column_major.minor_to_major == (0, 1)
        kiln.safetensors.save(path, {"m": column_major})
    with kiln.safetensors.load(path)["m"] as back:
        assert_same(back, matrix)


def test_no_tensors_and_metadata_only(tmp_path):
    path = tmp_path / "none.safetensors"
    kiln.safetensors.save(path, {}, metadata={"k": "v"})
    with kiln.safetensors.open(path) as f:
        assert f.names == [] and len(f) == 0
        assert f.metadata("k") == "v"
    assert kiln.safetensors.load(path) == {}


def test_unknown_tensor_is_not_found_listing_the_names(tmp_path):
    path = tmp_path / "names.safetensors"
    kiln.safetensors.save(path, {"weight": np.zeros(2, np.float32), "bias": np.zeros(1, np.float32)})
    with kiln.safetensors.open(path) as f:
        with pytest.raises(KilnError) as info:
            f.read("nope")
    assert info.value.code == StatusCode.NOT_FOUND
    assert "no tensor named 'nope'" in info.value.message
    assert "weight, bias" in info.value.message
    assert str(path) in info.value.message


def test_missing_metadata_is_not_found_unless_a_default_is_given(tmp_path):
    path = write_by_hand(tmp_path / "meta.safetensors", {"__metadata__": {"a": "1"}})
    with kiln.safetensors.open(path) as f:
        assert f.metadata("a") == "1"
        assert f.metadata("b", None) is None
        assert f.metadata("b", "fallback") == "fallback"
        with pytest.raises(KilnError) as info:
            f.metadata("b")
    assert info.value.code == StatusCode.NOT_FOUND
    assert "no metadata entry 'b'" in info.value.message


def test_a_missing_file_is_not_found(tmp_path):
    with pytest.raises(KilnError) as info:
        kiln.safetensors.open(tmp_path / "missing.safetensors")
    assert info.value.code == StatusCode.NOT_FOUND
    assert "cannot open" in info.value.message
    with pytest.raises(KilnError, match="NOT_FOUND"):
        kiln.safetensors.load(tmp_path / "missing.safetensors")


F32_2 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


@pytest.mark.parametrize(
    "header, data, size_delta, code, needle",
    [
        (b'{"a": nope}', b"", 0, StatusCode.INVALID_ARGUMENT, "not valid JSON"),
        (b"[1, 2]", b"", 0, StatusCode.INVALID_ARGUMENT, "start with '{'"),
        (
            {"a": F32_2, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}},
            bytes(12),
            0,
            StatusCode.INVALID_ARGUMENT,
            "neither overlap nor leave holes",
        ),
        (
            {
                "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                "b": F32_2 | {"data_offsets": [8, 16]},
            },
            bytes(16),
            0,
            StatusCode.INVALID_ARGUMENT,
            "'b' starts at byte 8",
        ),
        ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8), 0, 3, "its shape needs 12"),
        ({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0", 0, 3, "F8_E4M3"),
        ({"__metadata__": {"a": 1}}, b"", 0, StatusCode.INVALID_ARGUMENT, "is not a string"),
        (b'{"a": {}, "a": {}}', b"", 0, StatusCode.INVALID_ARGUMENT, "'a' twice"),
        (b"{}", b"", 1 << 40, StatusCode.INVALID_ARGUMENT, "at most 104857600"),
        # Truncated: the header runs past the end, or the data stops short.
        ({"a": F32_2}, b"", 100, StatusCode.DATA_LOSS, "header declares"),
        ({"a": F32_2 | {"shape": [4], "data_offsets": [0, 16]}}, bytes(8), 0, 3, "the file holds 8"),
    ],
    ids=[
        "bad_json",
        "not_an_object",
        "overlap",
        "hole",
        "wrong_size",
        "unknown_dtype",
        "metadata_not_string",
        "name_twice",
        "huge_header",
        "truncated_header",
        "truncated_data",
    ],
)
def test_malformed_files_are_refused(tmp_path, header, data, size_delta, code, needle):
    path = write_by_hand(tmp_path / "bad.safetensors", header, data, size_delta)
    with pytest.raises(KilnError) as info:
        kiln.safetensors.open(path)
    assert info.value.code == code
    assert needle in info.value.message
    assert str(path) in info.value.message
    with pytest.raises(KilnError) as again:
        kiln.safetensors.load(path)
    assert again.value.code == code


def test_a_file_shorter_than_the_size_field_is_data_loss(tmp_path):
    path = tmp_path / "tiny.safetensors"
    path.write_bytes(b"abc")
    with pytest.raises(KilnError) as info:
        kiln.safetensors.open(path)
    assert info.value.code == StatusCode.DATA_LOSS
    assert "8 bytes of header size" in info.value.message


def test_save_refuses_what_the_format_cannot_hold(tmp_path):
    path = tmp_path / "refused.safetensors"
    with pytest.raises(KilnError) as info:
        kiln.safetensors.save(path, {"z": np.array([1 + 2j], np.complex128)})
    assert info.value.code == StatusCode.INVALID_ARGUMENT
    assert "no dtype for c128" in info.value.message
    one = np.zeros(1, np.float32)
    with pytest.raises(KilnError, match="INVALID_ARGUMENT: .*given twice"):
        kiln.safetensors.save(path, [("a", one), ("a", one)])
    with pytest.raises(KilnError, match="INVALID_ARGUMENT: .*__metadata__"):
        kiln.safetensors.save(path, {"__metadata__": one})
    with pytest.raises(KilnError) as info:
        kiln.safetensors.save(tmp_path / "no-such-dir" / "x.safetensors", {"a": one})
    assert info.value.code == StatusCode.NOT_FOUND and "cannot create" in info.value.message
    # What cannot be a C string is refused before the library sees it.
    with pytest.raises(ValueError, match="NUL"):
        kiln.safetensors.save(path, {"a\0b": one})
    with pytest.raises(TypeError, match="metadata value"):
        kiln.safetensors.save(path, {"a": one}, metadata={"n": 1})
    with pytest.raises(TypeError, match="tensor name"):
        kiln.safetensors.save(path, {1: one})
    with kiln.Client("interpreter") as client:
        closed = client.buffer(one)
        closed.close()
        with pytest.raises(ValueError, match="closed"):
            kiln.safetensors.save(path, {"a": closed})


@needs_safetensors
def test_reads_what_the_safetensors_package_writes(tmp_path):
    tensors = {k: v for k, v in sample_tensors().items() if k not in ("scale", "complex")}
    path = str(tmp_path / "theirs.safetensors")
    safetensors.numpy.save_file(tensors, path, metadata={"format": "np"})
    with kiln.safetensors.open(path) as f:
        assert sorted(f.names) == sorted(tensors)
        assert f.metadata("format") == "np"
    loaded = kiln.safetensors.load(path)
    for name, expected in tensors.items():
        with loaded[name] as buffer:
            assert_same(buffer, expected)


@needs_safetensors
def test_the_safetensors_package_reads_what_kiln_writes(tmp_path):
    tensors = {k: v for k, v in sample_tensors().items() if k not in ("scale", "complex")}
    path = str(tmp_path / "ours.safetensors")
    kiln.safetensors.save(path, tensors, metadata={"format": "pt", "written_by": "kiln"})
    back = safetensors.numpy.load_file(path)
    assert sorted(back) == sorted(tensors)
    for name, expected in tensors.items():
        assert back[name].dtype == expected.dtype and back[name].shape == expected.shape
        np.testing.assert_array_equal(back[name], expected)
    with safetensors.safe_open(path, framework="np") as f:
        assert f.metadata() == {"format": "pt", "written_by": "kiln"}
