//! kiln.h 0.2: several devices per client, placement, copies between devices,
//! asynchronous execution with events (blocking, callbacks, `Future`),
//! donation, and buffers over host memory.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;

use kiln::{
    AlignedVec, Argument, Builder, Cancellation, Client, ClientOptions, Code, ElementType, Executable, ExecuteOptions,
    HostArray,
};

const COUNT_TO_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/count_to.hlo");

/// A client of `backend` presenting `n` devices.
fn client(backend: &str, n: usize) -> Client {
    Client::with_options(&ClientOptions { backend: Some(backend), num_devices: n }).unwrap()
}

/// x + x over f32[4].
fn double(client: &Client) -> Executable<'_> {
    let b = Builder::new("double").unwrap();
    let x = b.parameter(0, ElementType::F32, &[4], "x");
    client.compile(&b.build(b.add(x, x)).unwrap()).unwrap()
}

/// x + y over f32[4].
fn add(client: &Client) -> Executable<'_> {
    let b = Builder::new("add").unwrap();
    let x = b.parameter(0, ElementType::F32, &[4], "x");
    let y = b.parameter(1, ElementType::F32, &[4], "y");
    client.compile(&b.build(b.add(x, y)).unwrap()).unwrap()
}

fn count_to(client: &Client) -> Executable<'_> {
    let text = std::fs::read_to_string(COUNT_TO_PATH).unwrap();
    client.compile(&kiln::Computation::from_hlo_text(&text).unwrap()).unwrap()
}

const X: [f32; 4] = [1.0, -2.0, 0.5, 8.0];

/// A minimal executor: polls `future` on this thread, parking between polls
/// until its waker is woken. Returns the output and how many wakes there were.
fn block_on<F: Future>(future: F) -> (F::Output, usize) {
    struct Unpark {
        thread: Thread,
        wakes: AtomicUsize,
    }
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.wakes.fetch_add(1, Ordering::SeqCst);
            self.thread.unpark();
        }
    }
    let unpark = Arc::new(Unpark { thread: thread::current(), wakes: AtomicUsize::new(0) });
    let waker = Waker::from(Arc::clone(&unpark));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return (out, unpark.wakes.load(Ordering::SeqCst));
        }
        thread::park();
    }
}

/// Host data that counts how often it is dropped; `offset` elements are
/// skipped (to hand over misaligned data).
struct Counted<A> {
    data: A,
    offset: usize,
    drops: Arc<AtomicUsize>,
}

impl<A> Drop for Counted<A> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: the slice is a fixed part of `data`, which owns it and is never changed.
unsafe impl<A: HostArray> HostArray for Counted<A> {
    type Element = A::Element;
    fn as_slice(&self) -> &[A::Element] {
        &self.data.as_slice()[self.offset..]
    }
}

fn counted<A>(data: A, offset: usize) -> (Counted<A>, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    (Counted { data, offset, drops: Arc::clone(&drops) }, drops)
}

#[test]
fn host_backends_present_the_devices_asked_for() {
    for backend in ["cpu", "interpreter"] {
        let c = client(backend, 4);
        let devices = c.devices().unwrap();
        assert_eq!(devices.len(), 4, "{backend}");
        assert_eq!(c.device_count().unwrap(), 4);
        let mut descriptions = Vec::new();
        for (i, d) in devices.iter().enumerate() {
            assert_eq!(d.index().unwrap(), i);
            let description = d.description().unwrap();
            assert!(!description.is_empty());
            assert_eq!(description, c.device_description(i).unwrap());
            assert_eq!(*d, c.device(i).unwrap(), "equal devices are equal handles");
            descriptions.push(description);
        }
        descriptions.sort_unstable();
        descriptions.dedup();
        assert_eq!(descriptions.len(), 4, "{backend}: descriptions should differ: {descriptions:?}");
        assert_eq!(c.device(4).unwrap_err().code(), Code::OutOfRange);
        // The default: one device.
        assert_eq!(Client::with_backend(backend).unwrap().devices().unwrap().len(), 1);
    }
    let too_many = Client::with_options(&ClientOptions { num_devices: 65, ..Default::default() });
    assert_eq!(too_many.unwrap_err().code(), Code::InvalidArgument);
}

#[test]
fn buffers_live_where_they_are_made_and_executions_run_on_the_chosen_device() {
    let c = client("cpu", 3);
    let d = c.devices().unwrap();
    assert_eq!(c.buffer_from_slice(&X, &[4]).unwrap().device().unwrap(), d[0]);
    let x = d[2].buffer_from_slice(&X, &[4]).unwrap();
    assert_eq!(x.device().unwrap(), d[2]);
    assert_eq!(x.to_vec::<f32>().unwrap(), X);
    assert!(!x.is_host_alias().unwrap());

    let exe = double(&c);
    // Results are made on the arguments' device by default, and on the chosen one.
    let out = exe.execute(&[&x]).unwrap();
    assert_eq!(out[0].device().unwrap(), d[2]);
    let out = exe.execute_with(&[&x], &ExecuteOptions::default().with_device(d[2])).unwrap();
    assert_eq!(out[0].device().unwrap(), d[2]);
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [2.0, -4.0, 1.0, 16.0]);

    // An argument on another device is refused, naming it; copy_to moves it.
    let err = exe.execute_with(&[&x], &ExecuteOptions::default().with_device(d[1])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let err = exe.execute_async(&[&x], &ExecuteOptions::default().with_device(d[1])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let moved = x.copy_to(&d[1]).unwrap();
    assert_eq!(moved.device().unwrap(), d[1]);
    let out = exe.execute_with(&[&moved], &ExecuteOptions::default().with_device(d[1])).unwrap();
    assert_eq!(out[0].device().unwrap(), d[1]);
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [2.0, -4.0, 1.0, 16.0]);

    // No arguments: the client's first device unless one is chosen.
    let b = Builder::new("constant").unwrap();
    let k = client_compile_constant(&c, &b);
    assert_eq!(k.execute(&[]).unwrap()[0].device().unwrap(), d[0]);
    assert_eq!(k.execute_with(&[], &ExecuteOptions::default().with_device(d[2])).unwrap()[0].device().unwrap(), d[2]);
}

fn client_compile_constant<'c>(c: &'c Client, b: &Builder) -> Executable<'c> {
    c.compile(&b.build(b.constant_scalar(7.0f32)).unwrap()).unwrap()
}

#[test]
fn copy_to_copies_between_devices_of_one_client_only() {
    let c = client("cpu", 2);
    let other = client("cpu", 2);
    let d = c.devices().unwrap();
    let x = c.buffer_from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let y = x.copy_to(&d[1]).unwrap();
    assert_eq!(y.device().unwrap(), d[1]);
    assert_eq!(y.dims().unwrap(), [2, 3]);
    assert_eq!(y.to_vec::<i32>().unwrap(), [1, 2, 3, 4, 5, 6]);
    let back = y.copy_to(&d[0]).unwrap();
    assert_eq!(back.to_vec::<i32>().unwrap(), [1, 2, 3, 4, 5, 6]);
    let err = x.copy_to(&other.device(1).unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
}

#[test]
fn async_executions_chain_and_complete() {
    let c = client("cpu", 2);
    let exe = double(&c);
    let d1 = c.device(1).unwrap();
    let mut current = d1.buffer_from_slice(&X, &[4]).unwrap();
    let mut events = Vec::new();
    for _ in 0..5 {
        // Each run takes the previous one's result at once.
        let (mut out, event) = exe.execute_async(&[&current], &ExecuteOptions::default()).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].dims().unwrap(), [4], "shapes are known at once");
        current = out.pop().unwrap();
        events.push(event);
    }
    events.last().unwrap().wait().unwrap();
    for e in &events {
        assert!(e.is_ready().unwrap());
        e.wait().unwrap();
    }
    assert_eq!(current.device().unwrap(), d1);
    assert_eq!(current.to_vec::<f32>().unwrap(), X.map(|v| v * 32.0));
    current.ready_event().unwrap().wait().unwrap();

    // The same chain, awaited as a Future; the executable and the first
    // argument may go while it runs.
    let exe2 = double(&c);
    let first = c.buffer_from_slice(&X, &[4]).unwrap();
    let (mut out, _) = exe2.execute_async(&[&first], &ExecuteOptions::default()).unwrap();
    drop(first);
    let (out2, event) = exe2.execute_async(&[&out.pop().unwrap()], &ExecuteOptions::default()).unwrap();
    drop(exe2);
    let (outcome, _) = block_on(event);
    outcome.unwrap();
    assert_eq!(out2[0].to_vec::<f32>().unwrap(), X.map(|v| v * 4.0));

    // A buffer made from host memory is ready at once.
    let ready = c.buffer_from_slice(&X, &[4]).unwrap().ready_event().unwrap();
    assert!(ready.is_ready().unwrap());
    assert_eq!(block_on(ready).0, Ok(()));
}

#[test]
fn on_ready_calls_back_once_with_the_outcome() {
    let c = Client::new().unwrap();
    let exe = count_to(&c);
    let n = c.buffer_from_slice(&[20_000_000i64], &[]).unwrap();
    let (out, event) = exe.execute_async(&[&n], &ExecuteOptions::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    let tx2 = tx.clone();
    event.on_ready(move |outcome| tx.send(("closure", outcome, thread::current().id())).unwrap()).unwrap();
    // A boxed FnOnce works as well.
    let boxed: Box<dyn FnOnce(kiln::Result<()>) + Send> =
        Box::new(move |outcome| tx2.send(("boxed", outcome, thread::current().id())).unwrap());
    event.on_ready(boxed).unwrap();
    let mut got: Vec<_> = (0..2).map(|_| rx.recv_timeout(Duration::from_secs(120)).unwrap()).collect();
    got.sort_by_key(|g| g.0);
    assert_eq!(got[0].0, "boxed");
    assert_eq!(got[1].0, "closure");
    assert!(got.iter().all(|g| g.1 == Ok(())));
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err(), "each callback runs once");
    assert!(event.is_ready().unwrap());
    assert_eq!(out[0].to_vec::<i64>().unwrap(), [20_000_000]);

    // On a ready event the callback runs at once, on the calling thread.
    let (tx, rx) = mpsc::channel();
    event.on_ready(move |outcome| tx.send((outcome, thread::current().id())).unwrap()).unwrap();
    let (outcome, id) = rx.try_recv().expect("ran before on_ready returned");
    assert_eq!(outcome, Ok(()));
    assert_eq!(id, thread::current().id());
}

#[test]
fn an_async_failure_shows_in_the_event_the_future_and_the_results() {
    for backend in ["cpu", "interpreter"] {
        let c = Client::with_backend(backend).unwrap();
        let exe = count_to(&c);
        let endless = c.buffer_from_slice(&[-1i64], &[]).unwrap();
        let options = ExecuteOptions::default().with_timeout(Duration::from_millis(200));
        let (out, event) = exe.execute_async(&[&endless], &options).unwrap();
        // A second execution on the failing result fails too.
        let (chained, chained_event) = count_to(&c).execute_async(&[&out[0]], &ExecuteOptions::default()).unwrap();
        let (tx, rx) = mpsc::channel();
        event.on_ready(move |outcome| tx.send(outcome).unwrap()).unwrap();

        let (outcome, wakes) = block_on(event);
        let err = outcome.unwrap_err();
        assert_eq!(err.code(), Code::DeadlineExceeded, "{backend}: {err}");
        assert!(wakes >= 1, "{backend}: the future completed without being woken");
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)).unwrap().unwrap_err().code(), Code::DeadlineExceeded);
        assert_eq!(out[0].to_vec::<i64>().unwrap_err().code(), Code::DeadlineExceeded);
        assert_eq!(out[0].ready_event().unwrap().wait().unwrap_err().code(), Code::DeadlineExceeded);
        assert_eq!(chained_event.wait().unwrap_err().code(), Code::DeadlineExceeded);
        assert_eq!(chained[0].to_vec::<i64>().unwrap_err().code(), Code::DeadlineExceeded);
        // A synchronous execute on the failed result returns that error too.
        assert_eq!(exe.execute(&[&out[0]]).unwrap_err().code(), Code::DeadlineExceeded);

        // Cancelled from outside, with a blocking wait; the cancellation may go at once.
        let cancellation = Cancellation::new().unwrap();
        let (out, event) =
            exe.execute_async(&[&endless], &ExecuteOptions::default().with_cancellation(&cancellation)).unwrap();
        thread::sleep(Duration::from_millis(50));
        assert!(!event.is_ready().unwrap(), "{backend}: an endless loop finished");
        cancellation.cancel();
        drop(cancellation);
        assert_eq!(event.wait().unwrap_err().code(), Code::Cancelled);
        assert_eq!(event.wait().unwrap_err().code(), Code::Cancelled, "wait may be repeated");
        assert_eq!(out[0].to_vec::<i64>().unwrap_err().code(), Code::Cancelled);
        // Everything stays usable.
        let n = c.buffer_from_slice(&[5i64], &[]).unwrap();
        assert_eq!(exe.execute(&[&n]).unwrap()[0].to_vec::<i64>().unwrap(), [5]);
    }
}

#[test]
fn donated_buffers_are_consumed() {
    let c = client("cpu", 2);
    let exe = add(&c);
    let x = c.buffer_from_slice(&X, &[4]).unwrap();
    let y = c.buffer_from_slice(&[1.0f32; 4], &[4]).unwrap();
    let out = exe.execute_donating(vec![Argument::Donated(x), (&y).into()], &ExecuteOptions::default()).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), X.map(|v| v + 1.0));
    assert_eq!(y.to_vec::<f32>().unwrap(), [1.0; 4], "a borrowed argument stays usable");

    // The memory of a donated buffer over host data is released once the
    // execution is done with it, with no handle left for the caller to drop.
    let d0 = c.device(0).unwrap();
    let (data, drops) = counted(AlignedVec::from_slice(&X), 0);
    let aliased = d0.buffer_alias_host(data, &[4]).unwrap();
    assert!(aliased.is_host_alias().unwrap());
    let (out, event) =
        exe.execute_async_donating(vec![aliased.into(), (&y).into()], &ExecuteOptions::default()).unwrap();
    event.wait().unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), X.map(|v| v + 1.0));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the donated host memory is released once");

    // A call that fails donates nothing, and consumes the buffer all the same.
    let (data, drops) = counted(AlignedVec::from_slice(&X), 0);
    let wrong_device = c.device(1).unwrap().buffer_alias_host(data, &[4]).unwrap();
    let err = exe.execute_donating(vec![wrong_device.into(), (&y).into()], &ExecuteOptions::default()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // What the safe API makes impossible, the C side refuses: a donated handle
    // may only be destroyed.
    let raw = {
        let mut raw = std::ptr::null_mut();
        let bytes: &[u8] = unsafe { std::slice::from_raw_parts(X.as_ptr().cast(), 16) };
        let status = unsafe {
            kiln::sys::kiln_client_buffer_from_host(
                c.as_raw(),
                kiln::sys::KILN_TYPE_F32,
                [4i64].as_ptr(),
                1,
                std::ptr::null(),
                bytes.as_ptr().cast(),
                16,
                &mut raw,
            )
        };
        assert!(status.is_null());
        raw
    };
    let donated = [0usize];
    let opts = kiln::sys::kiln_execute_options_t {
        donated_arguments: donated.as_ptr(),
        num_donated_arguments: 1,
        ..Default::default()
    };
    let mut results = [std::ptr::null_mut(); 1];
    let mut n = 0;
    let args = [raw, y.as_raw()];
    let status = unsafe {
        kiln::sys::kiln_executable_execute(exe.as_raw(), args.as_ptr(), 2, &opts, results.as_mut_ptr(), 1, &mut n)
    };
    assert!(status.is_null());
    let mut host = [0f32; 4];
    let status = unsafe { kiln::sys::kiln_buffer_to_host(raw, host.as_mut_ptr().cast(), 16) };
    assert_eq!(unsafe { kiln::sys::kiln_status_code(status) }, kiln::sys::KILN_STATUS_FAILED_PRECONDITION);
    unsafe {
        kiln::sys::kiln_status_destroy(status);
        kiln::sys::kiln_buffer_destroy(raw);
        kiln::sys::kiln_buffer_destroy(results[0]);
    }
}

#[test]
fn cpu_reads_aligned_host_memory_in_place_and_releases_it_once() {
    let c = client("cpu", 2);
    let exe = double(&c);
    for device in c.devices().unwrap() {
        let (data, drops) = counted(AlignedVec::from_slice(&X), 0);
        assert_eq!(data.as_slice().as_ptr() as usize % AlignedVec::<f32>::ALIGNMENT, 0);
        let x = device.buffer_alias_host(data, &[4]).unwrap();
        assert!(x.is_host_alias().unwrap());
        assert_eq!(x.device().unwrap(), device);
        assert_eq!(x.to_vec::<f32>().unwrap(), X);
        let (out, event) = exe.execute_async(&[&x], &ExecuteOptions::default()).unwrap();
        drop(x);
        event.wait().unwrap();
        drop(exe.execute(&[&out[0]]).unwrap());
        assert_eq!(out[0].to_vec::<f32>().unwrap(), X.map(|v| v * 2.0));
        assert_eq!(drops.load(Ordering::SeqCst), 1, "released once the buffer and its execution are gone");
    }

    // Kept until the buffer goes.
    let (data, drops) = counted(AlignedVec::from_slice(&X), 0);
    let x = c.device(0).unwrap().buffer_alias_host(data, &[4]).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(x);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // Element alignment is all it takes: data 4 bytes past a 64-byte
    // boundary, a Vec and a boxed slice are all read in place (the exported
    // tensor points at the very memory handed over).
    let (data, drops) = counted(AlignedVec::from_slice(&[0.0f32, 1.0, 2.0, 3.0, 4.0]), 1);
    let at = data.as_slice().as_ptr();
    assert_eq!(at as usize % 64, 4);
    let x = c.device(0).unwrap().buffer_alias_host(data, &[4]).unwrap();
    assert!(x.is_host_alias().unwrap());
    assert_eq!(x.to_dlpack_versioned().unwrap().data_ptr(), at.cast());
    assert_eq!(x.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(x);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    let (data, drops) = counted(X.to_vec(), 0);
    let at = data.as_slice().as_ptr();
    let v = c.device(0).unwrap().buffer_alias_host(data, &[4]).unwrap();
    assert!(v.is_host_alias().unwrap(), "a Vec<f32> is read in place");
    assert_eq!(v.to_dlpack_versioned().unwrap().data_ptr(), at.cast());
    assert_eq!(v.to_vec::<f32>().unwrap(), X);
    drop(v);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    let boxed = X.map(f64::from).to_vec().into_boxed_slice();
    let at = boxed.as_ptr();
    let b = c.device(1).unwrap().buffer_alias_host(boxed, &[2, 2]).unwrap();
    assert!(b.is_host_alias().unwrap(), "a Box<[f64]> is read in place");
    assert_eq!(b.to_dlpack_versioned().unwrap().data_ptr(), at.cast());
    assert_eq!(b.to_vec::<f64>().unwrap(), X.map(f64::from));

    // PRED is copied: released before the call returns.
    let (data, drops) = counted(vec![true, false, true], 0);
    let p = c.device(0).unwrap().buffer_alias_host(data, &[3]).unwrap();
    assert!(!p.is_host_alias().unwrap());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(p.to_vec::<bool>().unwrap(), [true, false, true]);

    // A failing call releases the data once too.
    let (data, drops) = counted(AlignedVec::from_slice(&X), 0);
    let err = c.device(0).unwrap().buffer_alias_host(data, &[5]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

/// Counts calls of `kiln_host_release_fn`s given `&AtomicUsize`.
unsafe extern "C" fn count_release(user_data: *mut std::ffi::c_void) {
    unsafe { &*user_data.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
}

/// `kiln_device_buffer_alias_host` through kiln-sys, for data the safe API
/// cannot express (a misaligned `f32`, complex numbers); returns the buffer
/// (or the status code) and whether the buffer reads `data` in place.
fn alias_raw(
    device: &kiln::Device<'_>,
    element_type: ElementType,
    dims: &[i64],
    data: *const u8,
    bytes: usize,
    releases: &AtomicUsize,
) -> (*mut kiln::sys::kiln_buffer_t, bool) {
    let mut raw = std::ptr::null_mut();
    let status = unsafe {
        kiln::sys::kiln_device_buffer_alias_host(
            device.as_raw(),
            element_type.raw(),
            dims.as_ptr(),
            dims.len(),
            data.cast(),
            bytes,
            Some(count_release),
            (releases as *const AtomicUsize).cast_mut().cast(),
            &mut raw,
        )
    };
    assert!(status.is_null(), "kiln_device_buffer_alias_host failed");
    let mut alias = 0;
    assert!(unsafe { kiln::sys::kiln_buffer_is_host_alias(raw, &mut alias) }.is_null());
    (raw, alias == 1)
}

#[test]
fn cpu_copies_host_memory_off_its_element_alignment() {
    let c = client("cpu", 1);
    let device = c.device(0).unwrap();
    // f32 values starting at byte 1 of an 8-byte aligned allocation.
    let mut storage = vec![0u64; 3];
    let base = storage.as_mut_ptr().cast::<u8>();
    for (i, v) in X.iter().enumerate() {
        unsafe { std::ptr::copy_nonoverlapping(v.to_ne_bytes().as_ptr(), base.add(1 + 4 * i), 4) };
    }
    let releases = AtomicUsize::new(0);
    let (raw, alias) = alias_raw(&device, ElementType::F32, &[4], unsafe { base.add(1) }, 16, &releases);
    assert!(!alias, "an f32 at an odd address is copied");
    assert_eq!(releases.load(Ordering::SeqCst), 1, "copied data is released before the call returns");
    storage.fill(0);
    let mut host = [0f32; 4];
    unsafe {
        assert!(kiln::sys::kiln_buffer_to_host(raw, host.as_mut_ptr().cast(), 16).is_null());
        kiln::sys::kiln_buffer_destroy(raw);
    }
    assert_eq!(host, X);
    assert_eq!(releases.load(Ordering::SeqCst), 1);

    // Complex numbers need their parts' alignment only: c64 at 4 bytes past
    // an 8-byte boundary is read in place, at 2 bytes copied.
    let storage = [0u64; 3];
    let at = unsafe { storage.as_ptr().cast::<u8>().add(4) };
    let releases = AtomicUsize::new(0);
    let (raw, alias) = alias_raw(&device, ElementType::C64, &[2], at, 16, &releases);
    assert!(alias, "c64 aligned to 4 bytes is read in place");
    assert_eq!(releases.load(Ordering::SeqCst), 0);
    unsafe { kiln::sys::kiln_buffer_destroy(raw) };
    assert_eq!(releases.load(Ordering::SeqCst), 1);
    let at = unsafe { storage.as_ptr().cast::<u8>().add(2) };
    let releases = AtomicUsize::new(0);
    let (raw, alias) = alias_raw(&device, ElementType::C64, &[1], at, 8, &releases);
    assert!(!alias, "c64 aligned to 2 bytes is copied");
    assert_eq!(releases.load(Ordering::SeqCst), 1);
    unsafe { kiln::sys::kiln_buffer_destroy(raw) };
}

#[test]
fn the_interpreter_copies_host_memory() {
    let c = client("interpreter", 2);
    let (data, drops) = counted(AlignedVec::from_slice(&X), 0);
    let x = c.device(1).unwrap().buffer_alias_host(data, &[4]).unwrap();
    assert!(!x.is_host_alias().unwrap());
    assert_eq!(drops.load(Ordering::SeqCst), 1, "copied data is released before the call returns");
    assert_eq!(x.device().unwrap(), c.device(1).unwrap());
    let out = double(&c).execute(&[&x]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), X.map(|v| v * 2.0));
}

#[test]
fn aligned_vec_is_aligned_and_owns_its_elements() {
    for len in [0usize, 1, 3, 1000] {
        let mut v = AlignedVec::<f64>::zeroed(len);
        assert_eq!(v.len(), len);
        assert_eq!(v.as_ptr() as usize % 64, 0);
        assert!(v.iter().all(|&e| e == 0.0));
        for (i, e) in v.iter_mut().enumerate() {
            *e = i as f64;
        }
        let w = v.clone();
        assert_eq!(&*w, &*v);
        assert_ne!(w.as_ptr(), v.as_ptr());
    }
    assert_eq!(format!("{:?}", AlignedVec::from_slice(&[1u8, 2])), "[1, 2]");
}
