"""Devices, buffer placement, asynchronous execution and its events, donation and
zero-copy host buffers (kiln.h 0.2)."""

import asyncio
import gc
import pathlib
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import kiln

COUNT_TO = (pathlib.Path(__file__).parent / ".." / ".." / "testdata" / "count_to.hlo").read_text()

needs_cpu = pytest.mark.skipif("cpu" not in kiln.backends(), reason="this libkiln has no cpu backend")


@pytest.fixture(scope="module")
def cpu4():
    if "cpu" not in kiln.backends():
        pytest.skip("this libkiln has no cpu backend")
    with kiln.Client("cpu", num_devices=4) as client:
        yield client


def compile_doubling(client, shape=(4,)):
    """x -> x + x on f32[shape]."""
    with kiln.Builder("double") as b:
        x = b.parameter(0, "f32", list(shape), "x")
        computation = b.build(x + x)
    with computation:
        return client.compile(computation)


def compile_count_to(client):
    with kiln.Computation.from_hlo_text(COUNT_TO) as computation:
        return client.compile(computation)


def aligned(array, alignment=64):
    """A C-contiguous copy of `array` whose data starts at a multiple of `alignment` bytes."""
    array = np.asarray(array)
    raw = np.empty(array.nbytes + alignment, np.uint8)
    offset = (-raw.ctypes.data) % alignment
    out = raw[offset : offset + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    assert out.ctypes.data % alignment == 0
    return out


def misaligned(array):
    """A C-contiguous copy of `array` whose data starts off its element alignment:
    one byte past a 64-byte boundary of a uint8 buffer (NumPy allows such views)."""
    array = np.asarray(array)
    raw = np.empty(array.nbytes + 128, np.uint8)
    offset = (-raw.ctypes.data) % 64 + 1
    out = raw[offset : offset + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    assert out.ctypes.data % array.dtype.alignment != 0 and not out.flags.aligned
    return out


# -- devices and placement ----------------------------------------------------------------------


@needs_cpu
def test_several_cpu_devices_and_their_descriptions(cpu4):
    devices = cpu4.devices
    assert len(devices) == 4
    assert [d.index for d in devices] == [0, 1, 2, 3]
    descriptions = [d.description for d in devices]
    assert len(set(descriptions)) == 4, descriptions
    for i, d in enumerate(devices):
        assert isinstance(d, kiln.Device)
        assert d.description.startswith(f"cpu:{i}")
        assert str(d) == d.description
        assert d.client is cpu4
        assert cpu4.device(i) == d and hash(cpu4.device(i)) == hash(d)
    assert devices[0] != devices[1]
    with pytest.raises(kiln.KilnError) as error:
        cpu4.device(4)
    assert error.value.code == kiln.StatusCode.OUT_OF_RANGE


def test_num_devices_default_interpreter_and_limit():
    with kiln.Client("interpreter") as one:
        assert len(one.devices) == 1
    with kiln.Client("interpreter", num_devices=3) as three:
        assert [d.index for d in three.devices] == [0, 1, 2]
        assert len({d.description for d in three.devices}) == 3
    with pytest.raises(kiln.KilnError) as error:
        kiln.Client("interpreter", num_devices=65)
    assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT


@needs_cpu
def test_buffer_placement(cpu4):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    with cpu4.buffer(host) as first:
        assert first.device == cpu4.devices[0]
    for device in cpu4.devices:
        with device.buffer(host) as buffer:
            assert buffer.device == device
            assert buffer.device.index == device.index
            np.testing.assert_array_equal(buffer.to_numpy(), host)


@needs_cpu
def test_run_on_a_chosen_device(cpu4):
    devices = cpu4.devices
    with compile_doubling(cpu4) as exe, devices[2].buffer(np.arange(4, dtype=np.float32)) as x:
        # No device given: the first argument's device.
        (result,) = exe.execute([x])
        with result:
            assert result.device == devices[2]
            np.testing.assert_array_equal(result.to_numpy(), [0, 2, 4, 6])
        (result,) = exe.execute([x], device=devices[2])
        with result:
            assert result.device == devices[2]
        # Host arguments are copied to the chosen device.
        (result,) = exe.execute([np.ones(4, np.float32)], device=devices[3])
        with result:
            assert result.device == devices[3]
            np.testing.assert_array_equal(result.to_numpy(), [2, 2, 2, 2])
        np.testing.assert_array_equal(exe(np.ones(4, np.float32), device=devices[1]), [2, 2, 2, 2])


@needs_cpu
def test_an_argument_on_the_wrong_device_is_invalid_argument(cpu4):
    devices = cpu4.devices
    with compile_doubling(cpu4) as exe, devices[1].buffer(np.ones(4, np.float32)) as x:
        for run in (exe.execute, exe.execute_async):
            with pytest.raises(kiln.KilnError) as error:
                run([x], device=devices[0])
            assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT
            assert "argument 0" in error.value.message
        with pytest.raises(TypeError, match="Device"):
            exe.execute([x], device=1)


@needs_cpu
def test_copy_to(cpu4):
    devices = cpu4.devices
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    with devices[0].buffer(host) as source, source.copy_to(devices[3]) as copy:
        assert copy.device == devices[3]
        assert source.device == devices[0]
        assert copy.shape == (3, 4) and copy.element_type == kiln.ElementType.S32
        np.testing.assert_array_equal(copy.to_numpy(), host)
        with pytest.raises(TypeError, match="Device"):
            source.copy_to(3)
        # The wrong-device argument, moved with copy_to, runs.
        with compile_doubling(cpu4, (2,)) as exe, devices[1].buffer(np.ones(2, np.float32)) as x:
            with x.copy_to(devices[0]) as moved:
                np.testing.assert_array_equal(exe(moved, device=devices[0]), [2, 2])
        # A device of another client is INVALID_ARGUMENT.
        with kiln.Client("cpu", num_devices=2) as other:
            with pytest.raises(kiln.KilnError) as error:
                source.copy_to(other.devices[1])
            assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT


# -- asynchronous execution ---------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_a_chain_of_async_executions_waited_for(backend):
    if backend not in kiln.backends():
        pytest.skip(f"no {backend} backend")
    with kiln.Client(backend) as client, compile_doubling(client) as exe:
        x = client.buffer(np.arange(4, dtype=np.float32))
        events = []
        buffers = [x]
        for _ in range(6):
            (y,), event = exe.execute_async([buffers[-1]])
            assert isinstance(event, kiln.Event)
            assert y.shape == (4,) and y.dtype == np.float32  # known at once
            buffers.append(y)
            events.append(event)
        events[-1].wait()
        assert events[-1].done() and events[-1].is_ready
        assert all(e.done() for e in events)  # each ran before the next
        events[-1].wait()  # again: the same outcome
        np.testing.assert_array_equal(buffers[-1].to_numpy(), np.arange(4) * 64)
        with buffers[3].ready_event() as ready:
            ready.wait()
            assert ready.done()
        for event in events:
            event.close()
        for buffer in buffers:
            buffer.close()


@needs_cpu
def test_reading_a_result_waits_for_it_and_the_event_outlives_the_client():
    client = kiln.Client("cpu")
    exe = compile_count_to(client)
    (count,), event = exe.execute_async([np.int64(200_000)])
    assert count.to_numpy() == 200_000  # blocks until ready
    assert event.done()
    (count2,), event2 = exe.execute_async([np.int64(1000)])
    client.close()  # closes exe and count2; the execution keeps what it needs
    assert count2.closed
    event2.wait()
    assert event2.done()
    event.close()
    event2.close()


def test_async_chain_awaited_in_asyncio_without_blocking_the_loop():
    backend = "cpu" if "cpu" in kiln.backends() else "interpreter"
    with kiln.Client(backend) as client, compile_doubling(client) as doubling:
        with compile_count_to(client) as counting:

            async def main():
                ticks = 0
                stop = False

                async def ticker():
                    nonlocal ticks
                    while not stop:
                        ticks += 1
                        await asyncio.sleep(0.005)

                ticking = asyncio.ensure_future(ticker())
                # A chain of successes, awaited one after the other and all together.
                x = client.buffer(np.ones(4, np.float32))
                (y,), first = doubling.execute_async([x])
                (z,), second = doubling.execute_async([y])
                assert await first is None
                await asyncio.gather(second, z.ready_event())
                np.testing.assert_array_equal(z.to_numpy(), [4, 4, 4, 4])
                # A long run: the loop keeps ticking while it is awaited.
                before = ticks
                started = time.monotonic()
                (endless,), event = counting.execute_async([np.int64(-1)], timeout=0.4)
                with pytest.raises(kiln.KilnError) as error:
                    await event
                elapsed = time.monotonic() - started
                stop = True
                await ticking
                return error.value, ticks - before, elapsed, endless

            error, ticks, elapsed, endless = asyncio.run(main())
            assert error.code == kiln.StatusCode.DEADLINE_EXCEEDED
            assert elapsed >= 0.3
            assert ticks >= 10, f"the loop ticked {ticks} times in {elapsed:.2f}s: await blocked it"
            with pytest.raises(kiln.KilnError) as again:
                endless.to_numpy()
            assert again.value.code == kiln.StatusCode.DEADLINE_EXCEEDED
            endless.close()


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_on_ready_callback(backend):
    if backend not in kiln.backends():
        pytest.skip(f"no {backend} backend")
    with kiln.Client(backend) as client, compile_count_to(client) as exe:
        # Pending when registered: called once, later, with None.
        calls = []
        called = threading.Event()

        def on_ready(error):
            calls.append((error, threading.get_ident()))
            called.set()

        (result,), event = exe.execute_async([np.int64(-1)], timeout=0.2)
        (ok,), ok_event = exe.execute_async([np.int64(5)])
        ok_event.add_done_callback(on_ready)
        assert called.wait(30)
        assert calls[0][0] is None
        # Already ready: called at once, on this thread.
        ok_event.wait()
        now = []
        ok_event.add_done_callback(lambda error: now.append((error, threading.get_ident())))
        assert now == [(None, threading.get_ident())]
        # A failure: the callback gets the KilnError.
        failed = []
        done = threading.Event()
        event.add_done_callback(lambda error: (failed.append(error), done.set()))
        assert done.wait(30)
        assert isinstance(failed[0], kiln.KilnError)
        assert failed[0].code == kiln.StatusCode.DEADLINE_EXCEEDED
        assert "while" in failed[0].message
        time.sleep(0.05)
        assert len(calls) == 1 and len(failed) == 1  # once each
        with pytest.raises(TypeError, match="callable"):
            event.add_done_callback(None)
        for handle in (result, ok, event, ok_event):
            handle.close()


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_an_async_failure_surfaces_when_waited_for_and_when_read(backend):
    if backend not in kiln.backends():
        pytest.skip(f"no {backend} backend")
    with kiln.Client(backend) as client, compile_count_to(client) as exe:
        started = time.monotonic()
        (result,), event = exe.execute_async([np.int64(-1)], timeout=0.1)
        assert time.monotonic() - started < 0.1  # returned at once
        assert result.shape == () and result.dtype == np.int64
        with pytest.raises(kiln.KilnError) as error:
            event.wait()
        assert error.value.code == kiln.StatusCode.DEADLINE_EXCEEDED
        assert "while 'loop'" in error.value.message
        assert event.done()
        for read in (result.to_numpy, lambda: result.ready_event().wait()):
            with pytest.raises(kiln.KilnError) as error:
                read()
            assert error.value.code == kiln.StatusCode.DEADLINE_EXCEEDED
        # An execution chained on the failed result fails with its error, synchronously or not.
        with pytest.raises(kiln.KilnError) as error:
            exe.execute([result])
        assert error.value.code == kiln.StatusCode.DEADLINE_EXCEEDED
        (chained,), chained_event = exe.execute_async([result])
        with pytest.raises(kiln.KilnError) as error:
            chained_event.wait()
        assert error.value.code == kiln.StatusCode.DEADLINE_EXCEEDED
        with pytest.raises(kiln.KilnError) as error:
            chained.to_numpy()
        assert error.value.code == kiln.StatusCode.DEADLINE_EXCEEDED

        async def awaited():
            (late,), late_event = exe.execute_async([np.int64(-1)], timeout=0.05)
            try:
                await late_event
            finally:
                late.close()

        with pytest.raises(kiln.KilnError) as error:
            asyncio.run(awaited())
        assert error.value.code == kiln.StatusCode.DEADLINE_EXCEEDED
        # Cancelled from another thread while it runs in the background.
        with kiln.Cancellation() as cancellation:
            (stopped,), stopped_event = exe.execute_async([np.int64(-1)], cancellation=cancellation)
            threading.Timer(0.05, cancellation.cancel).start()
            with pytest.raises(kiln.KilnError) as error:
                stopped.to_numpy()
            assert error.value.code == kiln.StatusCode.CANCELLED
            with pytest.raises(kiln.KilnError) as error:
                stopped_event.wait()
            assert error.value.code == kiln.StatusCode.CANCELLED
        # The executable still runs.
        assert exe(np.int64(3)) == 3
        for handle in (result, event, chained, chained_event, stopped, stopped_event):
            handle.close()


# -- donation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_a_donated_buffer_may_only_be_closed(backend):
    if backend not in kiln.backends():
        pytest.skip(f"no {backend} backend")
    with kiln.Client(backend) as client, compile_doubling(client) as exe:
        x = client.buffer(np.arange(4, dtype=np.float32))
        (y,) = exe.execute([x], donate=[0])
        np.testing.assert_array_equal(y.to_numpy(), [0, 2, 4, 6])
        uses = {
            "to_numpy": x.to_numpy,
            "execute": lambda: exe.execute([x]),
            "execute_async": lambda: exe.execute_async([x]),
            "copy_to": lambda: x.copy_to(client.devices[0]),
            "ready_event": x.ready_event,
        }
        for name, use in uses.items():
            with pytest.raises(kiln.KilnError) as error:
                use()
            assert error.value.code == kiln.StatusCode.FAILED_PRECONDITION, name
            assert "donat" in error.value.message, (name, error.value.message)
        assert "FAILED_PRECONDITION" in repr(x)
        x.close()
        # Asynchronously, and chained: the donated result of one run feeds the next.
        (z,), event = exe.execute_async([y], donate=[0])
        event.wait()
        with pytest.raises(kiln.KilnError) as error:
            y.to_numpy()
        assert error.value.code == kiln.StatusCode.FAILED_PRECONDITION
        np.testing.assert_array_equal(z.to_numpy(), [0, 4, 8, 12])
        # A bad index or a repeated one donates nothing.
        for donate in ([1], [0, 0]):
            with pytest.raises(kiln.KilnError) as error:
                exe.execute([z], donate=donate)
            assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT, donate
        np.testing.assert_array_equal(z.to_numpy(), [0, 4, 8, 12])
        with pytest.raises(ValueError, match="donate"):
            exe.execute([z], donate=[-1])
        for handle in (y, z, event):
            handle.close()


# -- zero-copy host buffers ---------------------------------------------------------------------


@needs_cpu
def test_zero_copy_alias_on_cpu_keeps_the_array_alive_until_released(cpu4):
    device = cpu4.devices[1]
    array = aligned(np.arange(16, dtype=np.float32))
    ref = weakref.ref(array)
    refs_before = sys.getrefcount(array)
    released = []
    buffer = device.alias_host(array, on_release=lambda: released.append(threading.get_ident()))
    assert buffer.is_host_alias
    assert buffer.device == device
    assert sys.getrefcount(array) == refs_before + 1  # the binding holds it for the library
    np.testing.assert_array_equal(buffer.to_numpy(), np.arange(16))
    del array
    gc.collect()
    assert ref() is not None, "the aliased array was freed while the buffer lives"
    # An execution reading it (started, then the buffer closed at once) keeps it in use.
    with compile_doubling(cpu4, (16,)) as exe:
        (result,), event = exe.execute_async([buffer])
        buffer.close()
        event.wait()
        np.testing.assert_array_equal(result.to_numpy(), np.arange(16) * 2)
        result.close()
        event.close()
    gc.collect()
    deadline = time.monotonic() + 10
    while not released and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(released) == 1
    gc.collect()
    assert ref() is None, "the array outlived its release"
    time.sleep(0.05)
    assert len(released) == 1  # once


@needs_cpu
def test_alias_host_reads_element_aligned_arrays_in_place_on_cpu(cpu4):
    # The cpu backend reads data aligned to its element type in place (complex: to its
    # parts' width), as NumPy lays arrays out: default allocations, slices at element
    # offsets, views 8 bytes past a 64-byte boundary.
    device = cpu4.devices[0]
    base = np.arange(40, dtype=np.float64)
    arrays = [
        np.arange(16, dtype=np.float32),
        base[1:],  # 8 bytes past the allocation
        base[3:11].reshape(2, 4),
        np.arange(9, dtype=np.int16)[1:],  # 2-byte aligned only
        np.arange(5, dtype=np.int8)[1:],
        np.arange(12, dtype=np.complex64)[1:],  # 8-byte element, aligned to 4
        aligned(np.arange(6, dtype=np.complex128), 64)[1:],
        aligned(np.arange(16, dtype=np.float32), 64)[1:],  # 4 bytes past 64
    ]
    # A float32 view of a uint8 buffer, 4 bytes past a 64-byte boundary.
    arrays.append(aligned(np.arange(64, dtype=np.uint8), 64)[4:36].view(np.float32))
    for array in arrays:
        assert array.flags.c_contiguous and array.flags.aligned
        ref = weakref.ref(array)
        released = []
        buffer = device.alias_host(array, on_release=lambda released=released: released.append(1))
        assert buffer.is_host_alias, (array.dtype, array.ctypes.data % 64)
        assert released == []
        np.testing.assert_array_equal(buffer.to_numpy(), array)
        # The buffer reads the array's own memory: DLPack hands that very pointer out.
        assert np.from_dlpack(buffer).ctypes.data == array.ctypes.data
        del array
        gc.collect()
        assert ref() is not None
        buffer.close()
        gc.collect()
        assert released == [1]
    base[:] = -1  # slices of it were aliased: nothing reads them any more


@needs_cpu
def test_alias_host_copies_misaligned_and_pred_data_on_cpu(cpu4):
    device = cpu4.devices[0]
    makers = (
        lambda: misaligned(np.arange(16, dtype=np.float32)),
        lambda: misaligned(np.arange(4, dtype=np.int64)),
        lambda: misaligned(np.arange(3, dtype=np.complex64)),
        lambda: misaligned(np.arange(5, dtype=np.float16)),
        lambda: aligned(np.arange(64) % 3 == 0),
        lambda: np.arange(10) % 2 == 0,
    )
    for make in makers:
        array = make()
        ref = weakref.ref(array)
        want = array.copy()
        released = []
        with device.alias_host(array, on_release=lambda released=released: released.append(1)) as buffer:
            assert not buffer.is_host_alias, array.dtype
            assert released == [1]  # before the call returned
            del array
            gc.collect()
            assert ref() is None
            np.testing.assert_array_equal(buffer.to_numpy(), want)
        assert released == [1]


def test_interpreter_alias_host_copies():
    with kiln.Client("interpreter", num_devices=2) as client:
        device = client.devices[1]
        array = aligned(np.arange(8, dtype=np.int32))
        ref = weakref.ref(array)
        released = []
        buffer = device.alias_host(array, on_release=lambda: released.append(1))
        assert not buffer.is_host_alias
        assert buffer.device == device
        assert released == [1]  # the data was copied before the call returned
        array[:] = -1  # the buffer has its own copy
        del array
        gc.collect()
        assert ref() is None
        np.testing.assert_array_equal(buffer.to_numpy(), np.arange(8))
        buffer.close()
        assert released == [1]
