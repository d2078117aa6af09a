"""Ownership: close() is idempotent, with-statements, the client outlives children."""

import gc
import weakref

import numpy as np
import pytest

import kiln


def test_close_is_idempotent_and_closed_handles_refuse_use():
    client = kiln.Client()
    buffer = client.buffer(np.ones(2, np.float32))
    buffer.close()
    buffer.close()
    assert buffer.closed
    with pytest.raises(ValueError, match="Buffer is closed"):
        buffer.to_numpy()
    assert repr(buffer) == "<kiln.Buffer closed>"
    client.close()
    client.close()
    with pytest.raises(ValueError, match="Client is closed"):
        client.buffer(np.ones(2, np.float32))


def test_with_statement_closes():
    with kiln.Client() as client:
        assert client.backend in kiln.backends()
        assert client.devices
        with client.buffer(np.ones(2, np.float32)) as buffer:
            pass
        assert buffer.closed
    assert client.closed


def test_closing_the_client_closes_its_buffers_and_executables():
    client = kiln.Client()
    with kiln.Builder() as b:
        p = b.parameter(0, "f32", [2])
        computation = b.build(-p)
    exe = client.compile(computation)
    computation.close()  # an executable does not need its computation
    buffer = client.buffer(np.ones(2, np.float32))
    np.testing.assert_array_equal(exe(buffer), [-1, -1])
    client.close()
    assert exe.closed and buffer.closed


def test_children_keep_the_client_alive():
    client = kiln.Client()
    ref = weakref.ref(client)
    buffer = client.buffer(np.arange(3, dtype=np.int32))
    del client
    gc.collect()
    assert ref() is not None
    np.testing.assert_array_equal(buffer.to_numpy(), [0, 1, 2])
    del buffer
    gc.collect()
    assert ref() is None


def test_computation_outlives_its_builder(client):
    with kiln.Builder("b") as b:
        p = b.parameter(0, "s32", [])
        computation = b.build(b.mul(p, p))
    with computation, client.compile(computation) as exe:
        assert int(exe(np.int32(7))) == 49
