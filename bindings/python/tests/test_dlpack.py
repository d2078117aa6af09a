"""The DLPack protocol (kiln.h 0.2): Buffer.__dlpack__ / __dlpack_device__ for
consumers such as np.from_dlpack, and kiln.from_dlpack / Device.from_dlpack for
producers such as NumPy arrays; zero copy on the host backends."""

import ctypes
import gc
import os
import pathlib
import subprocess
import sys
import textwrap
import time
import weakref

import numpy as np
import pytest

import kiln
from kiln import _dlpack

needs_cpu = pytest.mark.skipif("cpu" not in kiln.backends(), reason="this libkiln has no cpu backend")

# np.from_dlpack asks for DLPack 1.x (and honours its read-only flag) from NumPy 2.1 on.
NUMPY_VERSIONED = tuple(int(part) for part in np.__version__.split(".")[:2]) >= (2, 1)
needs_versioned_numpy = pytest.mark.skipif(
    not NUMPY_VERSIONED, reason=f"NumPy {np.__version__} consumes only legacy DLPack capsules"
)


@pytest.fixture
def cpu():
    if "cpu" not in kiln.backends():
        pytest.skip("this libkiln has no cpu backend")
    with kiln.Client("cpu") as client:
        yield client


def data_pointer(buffer, **kwargs):
    """The address of the memory `buffer` exports (from a second, unconsumed export)."""
    capsule = buffer.__dlpack__(**kwargs)
    return _dlpack.tensor_of(capsule).data


def wait_for(condition, seconds=10):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


class LegacyOnly:
    """A producer from before DLPack 1.0: __dlpack__ takes no max_version."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, stream=None):
        return self.inner.__dlpack__()

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


def test_struct_layouts_follow_dlpack_1():
    assert ctypes.sizeof(_dlpack.DLTensor) == 48
    assert ctypes.sizeof(_dlpack.DLManagedTensor) == 64
    assert ctypes.sizeof(_dlpack.DLManagedTensorVersioned) == 80
    assert _dlpack.DLManagedTensorVersioned.dl_tensor.offset == 32


# -- export: Buffer.__dlpack__ ------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
@needs_versioned_numpy
def test_np_from_dlpack_shares_the_buffers_memory_read_only(backend):
    if backend not in kiln.backends():
        pytest.skip(f"this libkiln has no {backend} backend")
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    client = kiln.Client(backend)
    buffer = client.buffer(values)
    assert buffer.__dlpack_device__() == (1, 0)
    capsule = buffer.__dlpack__(max_version=(1, 0))
    assert _dlpack.capsule_name(capsule) == b"dltensor_versioned"
    assert _dlpack.version_of(capsule) == (1, 0)
    flags = _dlpack.flags_of(capsule)
    assert flags & _dlpack.FLAG_READ_ONLY and not flags & _dlpack.FLAG_IS_COPIED
    pointer = _dlpack.tensor_of(capsule).data
    del capsule  # unconsumed: its destructor deletes the tensor

    array = np.from_dlpack(buffer)
    assert array.ctypes.data == pointer
    assert array.__array_interface__["data"][0] == pointer
    assert array.dtype == np.float32 and array.shape == (2, 3)
    assert not array.flags.writeable  # NumPy honours DLPACK_FLAG_BITMASK_READ_ONLY
    with pytest.raises(ValueError):
        array[0, 0] = 7
    np.testing.assert_array_equal(array, values)
    # A second consumer gets the same memory.
    assert np.from_dlpack(buffer).ctypes.data == pointer

    # The array keeps the memory after the buffer and the client are gone.
    buffer.close()
    client.close()
    del buffer, client
    gc.collect()
    np.testing.assert_array_equal(array, values)
    np.testing.assert_array_equal(array * 2, values * 2)


@needs_cpu
@needs_versioned_numpy
def test_np_from_dlpack_of_an_aliased_array_is_the_array_and_releases_it_once(cpu):
    array = np.arange(16, dtype=np.float32)
    released = []
    buffer = cpu.devices[0].alias_host(array, on_release=lambda: released.append(1))
    assert buffer.is_host_alias
    view = np.from_dlpack(buffer)
    assert view.ctypes.data == array.ctypes.data
    assert data_pointer(buffer, max_version=(1, 0)) == array.ctypes.data
    assert data_pointer(buffer) == array.ctypes.data  # legacy export too
    buffer.close()
    gc.collect()
    assert released == []  # NumPy's view still holds the tensor
    np.testing.assert_array_equal(view, np.arange(16))
    del view
    gc.collect()
    assert wait_for(lambda: released == [1])
    time.sleep(0.05)
    assert released == [1]  # the consumed capsule did not delete it a second time


@needs_cpu
@pytest.mark.parametrize("max_version", [(1, 0), (1, 3), None, (0, 8)])
def test_an_unconsumed_capsule_deletes_its_tensor_once(cpu, max_version):
    array = np.arange(8, dtype=np.int32)
    released = []
    buffer = cpu.devices[0].alias_host(array, on_release=lambda: released.append(1))
    capsule = buffer.__dlpack__(max_version=max_version)
    versioned = max_version is not None and max_version[0] >= 1
    assert _dlpack.capsule_name(capsule) == (b"dltensor_versioned" if versioned else b"dltensor")
    assert _dlpack.tensor_of(capsule).data == array.ctypes.data
    buffer.close()
    gc.collect()
    assert released == []  # the tensor keeps the memory in use
    del capsule
    gc.collect()
    assert wait_for(lambda: released == [1])


@needs_cpu
def test_legacy_protocol_both_ways(cpu):
    values = np.arange(6, dtype=np.float64).reshape(3, 2)
    buffer = cpu.buffer(values)
    pointer = data_pointer(buffer, max_version=(1, 0))
    # np.from_dlpack falls back to the legacy call when __dlpack__ takes no max_version.
    array = np.from_dlpack(LegacyOnly(buffer))
    assert array.ctypes.data == pointer
    np.testing.assert_array_equal(array, values)
    # A legacy capsule straight into kiln.from_dlpack, and a legacy-only producer.
    again = kiln.from_dlpack(buffer.__dlpack__(), device=cpu)
    assert again.is_host_alias
    assert data_pointer(again) == pointer
    source = np.arange(5, dtype=np.int32)
    refs = sys.getrefcount(source)
    with kiln.from_dlpack(LegacyOnly(source), device=cpu) as imported:
        assert imported.is_host_alias
        assert data_pointer(imported) == source.ctypes.data
        assert sys.getrefcount(source) == refs + 1  # NumPy's tensor holds the array
    gc.collect()
    assert wait_for(lambda: sys.getrefcount(source) == refs)
    buffer.close()
    del array
    np.testing.assert_array_equal(again.to_numpy(), values)
    again.close()


@needs_cpu
def test_export_arguments(cpu):
    buffer = cpu.buffer(np.arange(4, dtype=np.int16))
    assert buffer.__dlpack__(dl_device=(1, 0), copy=False) is not None
    with pytest.raises(BufferError, match="stream"):
        buffer.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="kDLCPU"):
        buffer.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    # copy=True is honoured with a NumPy copy of the data (writeable, flagged copied).
    capsule = buffer.__dlpack__(max_version=(1, 0), copy=True)
    if _dlpack.capsule_name(capsule) == b"dltensor_versioned":  # NumPy >= 2.1
        assert _dlpack.flags_of(capsule) == _dlpack.FLAG_IS_COPIED
    assert _dlpack.tensor_of(capsule).data != data_pointer(buffer)
    del capsule
    for max_version in ((1, 0), None):
        copy = np.from_dlpack(kiln_copy(buffer, max_version))
        assert copy.ctypes.data != data_pointer(buffer)
        np.testing.assert_array_equal(copy, np.arange(4))
        if max_version is not None and NUMPY_VERSIONED:
            copy[0] = 9  # NumPy takes legacy tensors read-only, whoever made them
            np.testing.assert_array_equal(buffer.to_numpy(), np.arange(4))
    if NUMPY_VERSIONED:
        copy = np.from_dlpack(buffer, copy=True)
        assert copy.flags.writeable and copy.ctypes.data != data_pointer(buffer)
        np.testing.assert_array_equal(copy, np.arange(4))
    buffer.close()
    with pytest.raises(ValueError, match="closed"):
        buffer.__dlpack__()
    with pytest.raises(ValueError, match="closed"):
        buffer.__dlpack_device__()


def kiln_copy(buffer, max_version):
    """An object whose __dlpack__ asks `buffer` for a copy."""

    class Copying:
        def __dlpack__(self, **kwargs):
            return buffer.__dlpack__(max_version=max_version, copy=True)

        def __dlpack_device__(self):
            return buffer.__dlpack_device__()

    return Copying()


def open_clients(backends):
    clients = []
    for backend in backends:
        try:
            clients.append(kiln.Client(backend))
        except kiln.KilnError:  # e.g. cuda without a driver
            pass
    return clients


def test_other_backends_export_a_flagged_host_copy_and_copy_on_import():
    # cuda exports its GPU memory (kDLCUDA): the cuda tests below.
    clients = open_clients(b for b in kiln.backends() if b not in ("cpu", "interpreter", "cuda"))
    if not clients:
        pytest.skip(f"no backend besides cpu, interpreter and cuda opens here ({kiln.backends()})")
    for client in clients:
        with client:
            values = np.arange(6, dtype=np.float32).reshape(2, 3)
            buffer = client.buffer(values)
            assert buffer.__dlpack_device__() == (1, 0)  # the copy is in host memory
            capsule = buffer.__dlpack__(max_version=(1, 0))
            flags = _dlpack.flags_of(capsule)
            assert flags == _dlpack.FLAG_READ_ONLY | _dlpack.FLAG_IS_COPIED, client.backend
            del capsule
            with pytest.raises(BufferError, match="copy"):
                buffer.__dlpack__(max_version=(1, 0), copy=False)
            array = np.from_dlpack(buffer)
            buffer.close()
            np.testing.assert_array_equal(array, values)
            source = np.arange(4, dtype=np.int32)
            refs = sys.getrefcount(source)
            with client.from_dlpack(source) as imported:
                assert not imported.is_host_alias
                assert sys.getrefcount(source) == refs  # copied, the tensor deleted at once
                np.testing.assert_array_equal(imported.to_numpy(), source)


@needs_cpu
def test_exporting_an_execution_result_waits_for_it(cpu):
    with kiln.Builder("double") as b:
        x = b.parameter(0, "f32", [3], "x")
        computation = b.build(x + x)
    with computation, cpu.compile(computation) as exe:
        (result,), event = exe.execute_async([np.arange(3, dtype=np.float32)])
        array = np.from_dlpack(result)
        np.testing.assert_array_equal(array, [0, 2, 4])
        result.close()
        event.close()


@needs_cpu
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_consumer_refusing_the_tensor_still_frees_it(cpu):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    array = np.ones(4, ml_dtypes.bfloat16)
    released = []
    buffer = cpu.devices[0].alias_host(array, on_release=lambda: released.append(1))
    assert buffer.is_host_alias
    # NumPy has no bf16: it drops the capsule with its error pending, which a ctypes
    # destructor cannot leave in place (it is reported as unraisable).
    with pytest.raises((SystemError, RuntimeError, BufferError, TypeError)):
        np.from_dlpack(buffer)
    # Kiln takes bf16 from Kiln.
    with kiln.from_dlpack(buffer, device=cpu) as again:
        assert again.element_type == kiln.ElementType.BF16
        np.testing.assert_array_equal(again.to_numpy(), array)
    buffer.close()
    gc.collect()
    assert wait_for(lambda: released == [1])


# -- import: kiln.from_dlpack -------------------------------------------------------------------


@needs_cpu
def test_from_dlpack_of_numpy_is_zero_copy_and_keeps_the_array_alive(cpu):
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    pointer = array.ctypes.data
    ref = weakref.ref(array)
    buffer = cpu.devices[0].from_dlpack(array)
    assert buffer.is_host_alias
    assert buffer.shape == (3, 4) and buffer.dtype == np.float32
    assert data_pointer(buffer, max_version=(1, 0)) == pointer
    if NUMPY_VERSIONED:
        assert np.from_dlpack(buffer).ctypes.data == pointer
    del array
    gc.collect()
    assert ref() is not None, "the array was freed while the buffer reads it"
    np.testing.assert_array_equal(buffer.to_numpy(), np.arange(12).reshape(3, 4))
    buffer.close()
    gc.collect()
    assert wait_for(lambda: ref() is None), "the array outlived the buffer"


@needs_cpu
def test_from_dlpack_default_device_and_client_argument(cpu):
    array = np.arange(3, dtype=np.int64)
    buffer = kiln.from_dlpack(array)
    assert buffer.client.backend == "cpu"
    assert buffer.is_host_alias
    np.testing.assert_array_equal(buffer.to_numpy(), array)
    buffer.close()
    with kiln.from_dlpack(array, device=cpu) as buffer:
        assert buffer.client is cpu and buffer.device == cpu.devices[0]
    with cpu.from_dlpack(array) as buffer:
        assert buffer.client is cpu
    with pytest.raises(TypeError, match="device"):
        kiln.from_dlpack(array, device="cpu")


@needs_cpu
def test_from_dlpack_places_the_buffer_on_the_device():
    with kiln.Client("cpu", num_devices=2) as client:
        device = client.devices[1]
        with device.from_dlpack(np.arange(4, dtype=np.float32)) as buffer:
            assert buffer.device == device
            assert buffer.is_host_alias


@needs_cpu
def test_a_non_contiguous_array_is_invalid_argument_and_released(cpu):
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    transposed = base.T
    refs = sys.getrefcount(transposed)
    try:
        kiln.from_dlpack(transposed, device=cpu)
    except kiln.KilnError as error:  # not pytest.raises: its traceback would hold the array
        code, message = error.code, error.message
    else:
        pytest.fail("a transposed view was imported")
    assert code == kiln.StatusCode.INVALID_ARGUMENT
    assert "row-major" in message
    assert "kiln_device_buffer_from_dlpack" in message  # the library's own message
    assert sys.getrefcount(transposed) == refs  # the tensor was deleted
    with kiln.from_dlpack(np.ascontiguousarray(transposed), device=cpu) as buffer:
        np.testing.assert_array_equal(buffer.to_numpy(), transposed)


@needs_cpu
@pytest.mark.parametrize(
    "values",
    [
        np.array([True, False, True, True]),
        np.arange(-3, 5, dtype=np.int64).reshape(2, 4),
        np.linspace(-2, 2, 7).astype(np.float16),
        (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64).reshape(3, 2),
        np.arange(5, dtype=np.uint8),
        np.arange(4, dtype=np.int32),
        np.arange(3, dtype=np.float64),
        np.array([1 - 2j, 3j], dtype=np.complex128),
        np.float32(2.5),  # rank 0
    ],
    ids=lambda v: str(np.asarray(v).dtype),
)
def test_round_trips(cpu, values):
    values = np.asarray(values)
    if values.dtype == np.bool_ and not producer_exports_bool(values):
        pytest.skip(f"NumPy {np.__version__} cannot export bool arrays over DLPack (NumPy 1.25 can)")
    buffer = kiln.from_dlpack(values, device=cpu)
    assert buffer.dtype == values.dtype and buffer.shape == values.shape
    # PRED is copied (Kiln's bool is not NumPy's byte); everything else is read in place.
    assert buffer.is_host_alias == (values.dtype != np.bool_)
    np.testing.assert_array_equal(buffer.to_numpy(), values)
    back = np.from_dlpack(buffer)
    assert back.dtype == values.dtype and back.shape == values.shape
    np.testing.assert_array_equal(back, values)
    if values.dtype != np.bool_:
        assert back.ctypes.data == values.ctypes.data
    # And from a buffer Kiln made.
    with cpu.buffer(values) as own:
        np.testing.assert_array_equal(np.from_dlpack(own), values)
    buffer.close()


def test_the_interpreter_copies_on_import():
    with kiln.Client("interpreter") as client:
        array = np.arange(6, dtype=np.int32)
        refs = sys.getrefcount(array)
        buffer = kiln.from_dlpack(array, device=client)
        assert not buffer.is_host_alias
        assert sys.getrefcount(array) == refs  # copied: the tensor was deleted at once
        assert data_pointer(buffer) != array.ctypes.data
        array[:] = -1
        np.testing.assert_array_equal(buffer.to_numpy(), np.arange(6))
        # Its export is its own memory.
        assert np.from_dlpack(buffer).ctypes.data == data_pointer(buffer)
        buffer.close()


@needs_cpu
def test_kiln_to_kiln_reads_the_same_memory(cpu):
    with kiln.Client("cpu", num_devices=2) as other:
        source = cpu.buffer(np.arange(8, dtype=np.float32))
        pointer = data_pointer(source)
        moved = other.devices[1].from_dlpack(source)
        assert moved.is_host_alias and data_pointer(moved) == pointer
        source.close()
        cpu.close()  # the tensor keeps the memory; `other` reads it
        np.testing.assert_array_equal(moved.to_numpy(), np.arange(8))
        moved.close()


@needs_cpu
def test_refusals(cpu):
    with pytest.raises(TypeError, match="PyCapsule"):
        kiln.from_dlpack([1, 2, 3], device=cpu)
    capsule = np.arange(3).__dlpack__()
    with cpu.from_dlpack(capsule):
        pass
    with pytest.raises(BufferError, match="consumed already"):
        cpu.from_dlpack(capsule)
    device = cpu.devices[0]
    array = np.arange(3, dtype=np.float32)
    refs = sys.getrefcount(array)
    cpu.close()
    with pytest.raises(ValueError, match="closed"):
        device.from_dlpack(array)
    gc.collect()
    assert sys.getrefcount(array) == refs  # the unconsumed capsule deleted its tensor


# -- PyTorch, where it is installed -------------------------------------------------------------


def producer_exports_bool(array) -> bool:
    """Whether `array`'s library exports a bool tensor over DLPack (NumPy < 1.25 and
    PyTorch < 2.1 refuse; Kiln's import of bool is what the tests check)."""
    try:
        array.__dlpack__()
    except (BufferError, RuntimeError, TypeError):
        return False
    return True


def torch_or_skip():
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch is not installed (Debian: python3-torch, which .ci/install-deps installs)")
    return torch


@needs_cpu
def test_torch_from_dlpack_of_a_buffer(cpu):
    torch = torch_or_skip()
    buffer = cpu.buffer(np.arange(6, dtype=np.float32).reshape(2, 3))
    tensor = torch.from_dlpack(buffer)
    assert tensor.data_ptr() == data_pointer(buffer)
    assert tensor.dtype == torch.float32 and tuple(tensor.shape) == (2, 3)
    buffer.close()
    gc.collect()
    assert tensor.tolist() == [[0, 1, 2], [3, 4, 5]]


@needs_cpu
def test_kiln_from_dlpack_of_a_torch_tensor(cpu):
    torch = torch_or_skip()
    tensor = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    with kiln.from_dlpack(tensor, device=cpu) as buffer:
        assert buffer.is_host_alias
        assert data_pointer(buffer) == tensor.data_ptr()
        np.testing.assert_array_equal(buffer.to_numpy(), tensor.numpy())
    with pytest.raises(kiln.KilnError) as info:
        kiln.from_dlpack(tensor.t(), device=cpu)
    assert info.value.code == kiln.StatusCode.INVALID_ARGUMENT
    dtypes = [torch.int64, torch.float16, torch.bfloat16, torch.complex64]
    if producer_exports_bool(torch.ones(3, dtype=torch.bool)):
        dtypes.insert(0, torch.bool)
    else:
        print(f"PyTorch {torch.__version__} cannot export bool over DLPack: bool left out")
    for dtype in dtypes:
        source = torch.ones(3, dtype=dtype)
        with kiln.from_dlpack(source, device=cpu) as buffer:
            assert torch.equal(torch.from_dlpack(buffer), source)


# -- CUDA memory (kDLCUDA) ----------------------------------------------------------------------


def fake_cuda_driver():
    """The fake libcuda the C tests use (tests/cuda/fake_driver), beside the libkiln
    that KILN_LIBRARY_PATH names in a build tree; skips saying so when it is not built."""
    library = os.environ.get("KILN_LIBRARY_PATH")
    if not library:
        pytest.skip("KILN_LIBRARY_PATH is not set, so the build tree of the fake CUDA driver is unknown")
    capi = pathlib.Path(library)
    capi = capi if capi.is_dir() else capi.parent
    driver = capi.parent / "tests" / "cuda" / "libkiln_fake_cuda_driver.so"
    if not driver.is_file():
        pytest.skip(f"the fake CUDA driver is not built ({driver}: build target kiln_fake_cuda_driver)")
    return driver


# Runs in a process of its own: the cuda backend loads its driver once per process.
FAKE_CUDA_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import kiln
    from kiln import _dlpack

    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    client = kiln.Client("cuda")
    for gpu in (0, 1):
        buffer = client.device(gpu).buffer(values)
        ordinal, address = buffer.cuda_memory
        assert (ordinal, buffer.__dlpack_device__()) == (gpu, (2, gpu)), buffer.__dlpack_device__()
        for stream in (None, -1, 1, 2, 0x7F00):
            capsule = buffer.__dlpack__(max_version=(1, 0), stream=stream)
            tensor = _dlpack.tensor_of(capsule)
            assert (tensor.device.device_type, tensor.device.device_id) == (2, gpu)
            assert tensor.data == address, (hex(tensor.data), hex(address))
            assert _dlpack.flags_of(capsule) == _dlpack.FLAG_READ_ONLY
            del capsule
        # Zero copy both ways: a kiln buffer of the export is at the same address.
        with client.device(gpu).from_dlpack(buffer) as imported:
            assert imported.cuda_memory == (gpu, address)
            np.testing.assert_array_equal(imported.to_numpy(), values)
        # copy=True: another buffer on the same GPU; dl_device=(1, 0): host memory.
        capsule = buffer.__dlpack__(max_version=(1, 0), copy=True)
        tensor = _dlpack.tensor_of(capsule)
        assert (tensor.device.device_type, tensor.device.device_id) == (2, gpu) and tensor.data != address
        assert _dlpack.flags_of(capsule) & _dlpack.FLAG_IS_COPIED
        del capsule
        assert _dlpack.tensor_of(buffer.__dlpack__(dl_device=(1, 0))).device.device_type == 1
        for kwargs, needle in (
            ({"stream": 0}, "stream must be"),
            ({"stream": "default"}, "stream must be"),
            ({"dl_device": (7, 0)}, "kDLVulkan"),
            ({"dl_device": (1, 0), "copy": False}, "only as a copy"),
        ):
            try:
                buffer.__dlpack__(**kwargs)
            except BufferError as error:
                assert needle in str(error), (kwargs, error)
            else:
                raise AssertionError(f"{kwargs} was accepted")

    class Producer:
        # A CUDA producer that records the stream a consumer asks for.
        def __init__(self, inner):
            self.inner, self.streams = inner, []

        def __dlpack__(self, stream=None, max_version=None):
            self.streams.append(stream)
            return self.inner.__dlpack__(stream=stream, max_version=max_version)

        def __dlpack_device__(self):
            return self.inner.__dlpack_device__()

    source = client.device(1).buffer(values)
    producer = Producer(source)
    with kiln.from_dlpack(producer, device=client.device(1)) as imported:
        assert imported.cuda_memory == source.cuda_memory
    assert producer.streams == [1], producer.streams
    cpu = kiln.Client("cpu")
    refusals = ((client.device(0), "the device given is cuda:0"), (cpu, "cannot read GPU memory"))
    for device, needle in refusals:
        try:
            kiln.from_dlpack(source, device=device)
        except kiln.KilnError as error:
            assert error.code == kiln.StatusCode.INVALID_ARGUMENT and needle in str(error), error
        else:
            raise AssertionError("a tensor of GPU 1 was imported onto " + str(device))
    print("fake cuda dlpack: ok")
    """
)


def test_cuda_buffers_exchange_gpu_memory_on_the_fake_driver():
    driver = fake_cuda_driver()
    environment = dict(os.environ, KILN_CUDA_DRIVER=str(driver), KILN_FAKE_CUDA_DEVICES="2")
    environment.pop("KILN_CUBLAS_LIBRARY", None)
    run = subprocess.run(
        [sys.executable, "-c", FAKE_CUDA_SCRIPT], env=environment, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "fake cuda dlpack: ok" in run.stdout


def cuda_client_or_skip():
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip(f"no CUDA GPU for PyTorch {torch.__version__} here: the kDLCUDA round trip needs one")
    if "cuda" not in kiln.backends():
        pytest.skip("this libkiln has no cuda backend")
    try:
        return torch, kiln.Client("cuda")
    except kiln.KilnError as error:
        pytest.skip(f"Kiln's cuda backend does not open here: {error}")


def test_torch_cuda_tensors_and_cuda_buffers_share_gpu_memory():
    """On a real GPU: torch CUDA tensors and Kiln cuda buffers exchange device pointers."""
    torch, client = cuda_client_or_skip()
    with client:
        gpu = 0  # Kiln compiles for its first GPU
        tensor = torch.arange(12, dtype=torch.float32, device=f"cuda:{gpu}").reshape(3, 4)
        with kiln.from_dlpack(tensor, device=client.device(gpu)) as buffer:
            assert buffer.__dlpack_device__() == (2, gpu)
            assert buffer.cuda_memory == (gpu, tensor.data_ptr())
            np.testing.assert_array_equal(buffer.to_numpy(), tensor.cpu().numpy())
            with kiln.Builder("double") as b:
                x = b.parameter(0, "f32", [3, 4], "x")
                computation = b.build(x + x)
            with computation, client.compile(computation) as exe:
                (doubled,) = exe.execute([buffer])
            back = torch.from_dlpack(doubled)
            assert back.device == tensor.device and back.data_ptr() == doubled.cuda_memory[1]
            assert torch.equal(back, tensor * 2)
        with pytest.raises(kiln.KilnError):
            kiln.from_dlpack(tensor.t(), device=client.device(gpu))
