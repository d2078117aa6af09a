"""(c) Errors surface as kiln.KilnError with the C code and message intact."""

import numpy as np
import pytest

import kiln
from kiln import StatusCode


def test_shape_error_is_invalid_argument_naming_the_op():
    with kiln.Builder("bad") as b:
        x = b.parameter(0, "f32", [2])
        y = b.parameter(1, "f32", [3])
        with pytest.raises(kiln.KilnError) as info:
            b.add(x, y)
        error = info.value
        assert error.code is StatusCode.INVALID_ARGUMENT
        assert error.code == 3
        assert "add" in error.message and "f32[2]" in error.message and "f32[3]" in error.message
        assert str(error).startswith("INVALID_ARGUMENT: ")
        # The error is sticky: the builder reports it, and build refuses.
        assert b.first_error().message == error.message
        with pytest.raises(kiln.KilnError) as again:
            b.build()
        assert again.value.code == StatusCode.INVALID_ARGUMENT


def test_first_error_is_none_while_ops_succeed():
    with kiln.Builder() as b:
        b.parameter(0, "f32", [2])
        assert b.first_error() is None


def test_unknown_backend_is_not_found():
    with pytest.raises(kiln.KilnError) as info:
        kiln.Client("no-such-backend")
    assert info.value.code == StatusCode.NOT_FOUND
    assert "no-such-backend" in info.value.message


def test_hlo_parse_error_names_line_and_column():
    with pytest.raises(kiln.KilnError) as info:
        kiln.Computation.from_hlo_text("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0) oops\n}")
    assert info.value.code == StatusCode.INVALID_ARGUMENT
    assert "line " in info.value.message and "column " in info.value.message


def test_missing_npy_file_is_not_found(client, tmp_path):
    with pytest.raises(kiln.KilnError) as info:
        client.buffer_from_npy(tmp_path / "missing.npy")
    assert info.value.code == StatusCode.NOT_FOUND
    assert "missing.npy" in info.value.message


def test_wrong_arguments_to_execute(client):
    with kiln.Builder() as b:
        p = b.parameter(0, "f32", [2])
        computation = b.build(p + p)
    with computation, client.compile(computation) as exe:
        with pytest.raises(kiln.KilnError) as info:
            exe(np.zeros(3, np.float32))
        assert info.value.code == StatusCode.INVALID_ARGUMENT
        with pytest.raises(kiln.KilnError):
            exe()


def test_python_side_errors(client):
    with pytest.raises(TypeError, match="no kiln element type"):
        client.buffer(np.array(["a"]))
    with pytest.raises(TypeError):
        kiln.Builder().parameter(0, "not-a-type", [1])
    with client.buffer(np.zeros(2, np.float32)) as buffer:
        with pytest.raises(ValueError, match="dtype|out is"):
            buffer.to_numpy(out=np.zeros(2, np.float64))
        with pytest.raises(ValueError):
            buffer.to_numpy(out=np.zeros(3, np.float32))


def test_an_op_of_another_builder_is_invalid_argument():
    with kiln.Builder("first") as b1, kiln.Builder("second") as b2:
        x = b1.parameter(0, "f32", [])
        y = b2.parameter(0, "f32", [])
        with pytest.raises(kiln.KilnError) as info:
            b2.add(x, y)
        assert info.value.code == StatusCode.INVALID_ARGUMENT
        for needle in ("kiln_op_add: operand 'lhs'", "builder 'first'", "not of builder 'second'"):
            assert needle in info.value.message
        with pytest.raises(kiln.KilnError) as info:
            b1.build(y)
        assert info.value.code == StatusCode.INVALID_ARGUMENT
        assert "kiln_builder_build: argument 'root'" in info.value.message
        with b1.build(x) as own:
            assert own.parameter_count == 1
    gone = kiln.Builder("gone")
    z = gone.parameter(0, "f32", [])
    gone.close()
    with kiln.Builder("third") as b3:
        with pytest.raises(kiln.KilnError) as info:
            b3.neg(z)
        assert info.value.code == StatusCode.INVALID_ARGUMENT
        assert "no longer exists" in info.value.message


def test_codes_from_a_newer_library_are_kept():
    error = kiln.KilnError(99, "future")
    assert error.code == 99 and "future" in str(error)
