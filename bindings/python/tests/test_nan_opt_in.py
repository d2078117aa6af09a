"""The compile option allow_unsafe_nan_math (kiln_compile_options_t): passed
through to the backend, a bool only. Devices that keep NaN (the interpreter,
lavapipe) compile with or without it and still give NaN-exact results; the
refusal on a device without float controls is tested in C++
(tests/vulkan/nan_refusal_test.cc fakes such a device)."""

import numpy as np
import pytest

import kiln


def nan_test_computation():
    with kiln.Builder("nan_test") as b:
        x = b.parameter(0, "f32", [4])
        return b.build(b.ne(x, x))


def check_opt_in(client):
    x = np.array([1.0, np.nan, np.inf, -0.0], np.float32)
    with nan_test_computation() as computation:
        for allow in (False, True):
            with client.compile(computation, allow_unsafe_nan_math=allow) as executable:
                np.testing.assert_array_equal(executable(x), [False, True, False, False])


def test_option_accepted_on_the_interpreter():
    with kiln.Client("interpreter") as client:
        check_opt_in(client)


def test_option_accepted_on_vulkan():
    if "vulkan" not in kiln.backends():
        pytest.skip("this libkiln has no vulkan backend")
    try:
        client = kiln.Client("vulkan")
    except kiln.KilnError as error:
        pytest.skip(f"no vulkan device here: {error}")
    with client:
        check_opt_in(client)


def test_option_must_be_a_bool():
    with kiln.Client("interpreter") as client, nan_test_computation() as computation:
        with pytest.raises(TypeError, match="allow_unsafe_nan_math must be a bool, not int"):
            client.compile(computation, allow_unsafe_nan_math=1)
