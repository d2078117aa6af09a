"""Timeouts and cancellation stop a loop that never ends, on every backend,
and leave the executable and its arguments usable."""

import pathlib
import threading

import numpy as np
import pytest

import kiln

# count_to, shared by the bindings' tests: counts i up from 0 while i != n,
# and for n = -1 that is 2^64 iterations.
COUNT_TO = (pathlib.Path(__file__).parent / ".." / ".." / "testdata" / "count_to.hlo").read_text()


def open_client(backend):
    """(kiln.Client(backend), None), or (None, "skipping backend B: why") when `backend` cannot run
    on this machine: creating its client fails with UNAVAILABLE, as cuda's does without the NVIDIA
    driver. Any other failure raises."""
    try:
        return kiln.Client(backend), None
    except kiln.KilnError as error:
        if error.code != kiln.StatusCode.UNAVAILABLE:
            raise
        return None, f"skipping backend {backend}: {error.message}"


def runs_here(backend):
    """Whether a client of `backend` opens on this machine (see open_client)."""
    client, _ = open_client(backend)
    if client is None:
        return False
    client.close()
    return True


@pytest.fixture(params=kiln.backends())
def counting(request):
    """(client, executable) counting to its argument; -1 never ends. A backend that cannot run
    here skips the test, unless no backend can: then it fails rather than pass with all skipped."""
    client, skipped = open_client(request.param)
    if client is None:
        if not any(runs_here(other) for other in kiln.backends() if other != request.param):
            pytest.fail(f"{skipped}; so is every other backend: nothing can be tested")
        pytest.skip(skipped)
    with client, kiln.Computation.from_hlo_text(COUNT_TO) as computation:
        with client.compile(computation) as exe:
            yield client, exe


def forever(b):
    """A while loop whose condition is the constant true."""
    with kiln.Builder("cond") as c:
        c.parameter(0, "f32", [])
        condition = c.build(c.constant_pred(True))
    with kiln.Builder("body") as body_builder:
        s = body_builder.parameter(0, "f32", [])
        body = body_builder.build(s + 1.0)
    return b.while_(condition, body, b.parameter(0, "f32", []))


def test_timeout_stops_an_endless_loop_and_the_executable_runs_again(counting):
    client, exe = counting
    with client.buffer(np.int64(-1)) as endless:
        with pytest.raises(kiln.KilnError) as error:
            exe.execute([endless], timeout=0.03)
        assert error.value.code == kiln.StatusCode.DEADLINE_EXCEEDED
        assert "while 'loop'" in error.value.message
        assert endless.to_numpy() == -1
    assert exe(np.int64(7), timeout=60) == 7


def test_cancel_from_another_thread():
    tested = 0
    for backend in kiln.backends():
        client, skipped = open_client(backend)
        if client is None:
            print(skipped)
            continue
        tested += 1
        with client, kiln.Builder("forever") as b:
            computation = b.build(forever(b))
            with computation, client.compile(computation) as exe, kiln.Cancellation() as cancellation:
                assert not cancellation.cancelled
                canceller = threading.Timer(0.02, cancellation.cancel)
                canceller.start()
                with pytest.raises(kiln.KilnError) as error:
                    exe(np.float32(0), cancellation=cancellation)
                canceller.join()
                assert error.value.code == kiln.StatusCode.CANCELLED, backend
                assert cancellation.cancelled
                # One-shot: a later execution given it does not start.
                with pytest.raises(kiln.KilnError) as again:
                    exe(np.float32(0), cancellation=cancellation)
                assert again.value.code == kiln.StatusCode.CANCELLED
    assert tested > 0, "every backend was skipped: nothing was tested"


def test_an_unused_cancellation_and_a_long_timeout_change_nothing(counting):
    _, exe = counting
    with kiln.Cancellation() as cancellation:
        assert exe(np.int64(100), timeout=3600, cancellation=cancellation) == 100


def test_bad_options(counting):
    _, exe = counting
    for timeout in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="timeout"):
            exe(np.int64(1), timeout=timeout)
    with pytest.raises(TypeError, match="Cancellation"):
        exe(np.int64(1), cancellation=object())
    closed = kiln.Cancellation()
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        exe(np.int64(1), cancellation=closed)
