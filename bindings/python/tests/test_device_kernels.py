"""Device kernels of a user-defined op from Python (``kiln.register_device_kernel``):
the errors of the code and entry point, and ZeroOutIndex from a GLSL shader
(tests/device_user_ops/zero_out_index.comp, compiled with glslc here) on vulkan
against the op's Python kernel on the interpreter."""

import shutil
import subprocess

import numpy as np
import pytest

import kiln
from conftest import REPO_ROOT

SHADER = REPO_ROOT / "tests" / "device_user_ops" / "zero_out_index.comp"
PTX = ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n\tret;\n}\n"


def zero_out(frame):
    keep = frame.attrs.get("preserve_index", 0)
    out = frame.results[0]
    out[...] = 0
    out[keep] = frame.args[0][keep]


@pytest.fixture(scope="module", autouse=True)
def ops():
    kiln.register_op(
        "PyDeviceZeroOut",
        attrs=["preserve_index: int >= 0 = 0"],
        inputs=["to_zero: int32"],
        outputs=["zeroed: int32"],
    )
    kiln.register_kernel("PyDeviceZeroOut", zero_out, dtype=np.int32)


def test_code_and_entry_errors():
    with pytest.raises(kiln.KilnError, match="the vulkan kernel is not a SPIR-V module") as error:
        kiln.register_device_kernel("PyDeviceZeroOut", "vulkan", b"\x01\x02\x03\x04" * 5, "main")
    assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT
    with pytest.raises(kiln.KilnError, match=r"has no \.entry kernel named 'main' \(it has 'k'\)") as error:
        kiln.register_device_kernel("PyDeviceZeroOut", "cuda", PTX, "main")
    assert error.value.code == kiln.StatusCode.NOT_FOUND
    with pytest.raises(kiln.KilnError, match="not 'metal'") as error:
        kiln.register_device_kernel("PyDeviceZeroOut", "metal", PTX, "k")
    kiln.register_device_kernel("PyDeviceZeroOut", "cuda", PTX, "k", dtype=np.int32, block_size=32)
    with pytest.raises(kiln.KilnError, match="already has a cuda kernel for s32") as error:
        kiln.register_device_kernel("PyDeviceZeroOut", "cuda", PTX, "k", dtype=np.int32)
    assert error.value.code == kiln.StatusCode.ALREADY_EXISTS
    assert "cuda:s32 (k)" in kiln.registered_ops()


def run(client, x, attrs):
    with kiln.Builder("zero_out") as b:
        p = b.parameter(0, x.dtype, x.shape)
        with b.build(b.call_registered("PyDeviceZeroOut", [p], attrs)) as computation:
            with client.compile(computation) as executable:
                return executable(x)


def test_shader_on_vulkan(tmp_path):
    glslc = shutil.which("glslc")
    if glslc is None:
        pytest.skip("glslc is not installed (it compiles the test's GLSL shader)")
    if "vulkan" not in kiln.backends():
        pytest.skip("this libkiln has no vulkan backend")
    try:
        device = kiln.Client("vulkan")
    except kiln.KilnError as error:
        pytest.skip(f"no vulkan device here: {error}")
    spirv = tmp_path / "zero_out_index.spv"
    subprocess.run([glslc, "--target-env=vulkan1.2", "-O", "-o", str(spirv), str(SHADER)], check=True)
    kiln.register_device_kernel("PyDeviceZeroOut", "vulkan", spirv.read_bytes(), "main", dtype=np.int32)
    x = np.arange(1, 301, dtype=np.int32) * 7
    with device, kiln.Client("interpreter") as host:
        for attrs in (None, {"preserve_index": 3}, {"preserve_index": 299}):
            want = run(host, x, attrs)
            assert np.count_nonzero(want) == 1
            np.testing.assert_array_equal(run(device, x, attrs), want)


def test_ptx_on_a_cuda_gpu():
    """ZeroOutIndex from tests/device_user_ops/zero_out.ptx on a real GPU (the fake
    driver's tests check the launch; this one checks what the kernel wrote)."""
    if "cuda" not in kiln.backends():
        pytest.skip("this libkiln has no cuda backend")
    try:
        device = kiln.Client("cuda")
    except kiln.KilnError as error:
        pytest.skip(f"no CUDA GPU here: {error}")
    if "fake" in device.devices[0].description.lower():
        device.close()
        pytest.skip("the cuda backend runs on the fake driver here, which runs no kernel")
    kiln.register_op(
        "PyCudaZeroOut",
        attrs=["preserve_index: int >= 0 = 0"],
        inputs=["to_zero: int32"],
        outputs=["zeroed: int32"],
    )
    kiln.register_kernel("PyCudaZeroOut", zero_out, dtype=np.int32)
    ptx = (REPO_ROOT / "tests" / "device_user_ops" / "zero_out.ptx").read_text()
    kiln.register_device_kernel("PyCudaZeroOut", "cuda", ptx, "zero_out_index", dtype=np.int32)
    x = np.arange(1, 1001, dtype=np.int32) * 7
    with device, kiln.Client("interpreter") as host:
        for attrs in (None, {"preserve_index": 3}, {"preserve_index": 999}):
            with kiln.Builder("zero_out") as b:
                p = b.parameter(0, x.dtype, x.shape)
                with b.build(b.call_registered("PyCudaZeroOut", [p], attrs)) as computation:
                    with device.compile(computation) as on_gpu, host.compile(computation) as on_host:
                        want = on_host(x)
                        assert np.count_nonzero(want) == 1
                        np.testing.assert_array_equal(on_gpu(x), want)
