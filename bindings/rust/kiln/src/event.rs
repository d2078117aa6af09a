//! Events: the completion of work that runs in the background.

use std::ffi::c_void;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use kiln_sys as sys;

use crate::error::{check, status_result, Result};

/// The completion of an asynchronous execution
/// ([`Executable::execute_async`](crate::Executable::execute_async)) or of the
/// filling of a buffer ([`Buffer::ready_event`](crate::Buffer::ready_event)).
///
/// One-shot: it becomes ready once, with `Ok(())` or the work's error. Wait for
/// it with [`Event::wait`] (blocking), poll it with [`Event::is_ready`], get a
/// callback with [`Event::on_ready`], or `.await` it: `Event` is a
/// [`Future`] (woken from the library's callback; no runtime needed).
///
/// Dropping it cancels nothing: the work and the callbacks already registered
/// go on. It may outlive the client, executable and buffers of its work.
/// Thread-safe (`Send + Sync`).
#[derive(Debug)]
pub struct Event {
    raw: NonNull<sys::kiln_event_t>,
    /// The state the `Future` implementation shares with its callback, made at
    /// the first poll.
    future: Option<Arc<Mutex<FutureState>>>,
}

#[derive(Debug, Default)]
struct FutureState {
    outcome: Option<Result<()>>,
    waker: Option<Waker>,
}

// SAFETY: kiln.h: an event "may be used from several threads"; every call on it
// is thread-safe. The future state is behind a mutex.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    /// # Safety
    /// `raw` must be a non-NULL event the caller owns.
    pub(crate) unsafe fn from_raw(raw: *mut sys::kiln_event_t) -> Event {
        Event { raw: NonNull::new(raw).expect("NULL event"), future: None }
    }

    /// The raw handle, for use with `kiln-sys`. Owned by `self`.
    pub fn as_raw(&self) -> *mut sys::kiln_event_t {
        self.raw.as_ptr()
    }

    /// Blocks until the event is ready and returns the work's outcome. May be
    /// called any number of times, from any thread.
    pub fn wait(&self) -> Result<()> {
        // SAFETY: live handle.
        check(unsafe { sys::kiln_event_await(self.raw.as_ptr()) })
    }

    /// Whether the event is ready. Never blocks.
    pub fn is_ready(&self) -> Result<bool> {
        let mut ready = 0;
        // SAFETY: live handle and valid out-parameter.
        check(unsafe { sys::kiln_event_is_ready(self.raw.as_ptr(), &mut ready) })?;
        Ok(ready != 0)
    }

    /// Calls `callback` once with the work's outcome when the event is ready: at
    /// once on this thread when it already is, otherwise on the library's thread
    /// that finishes the work. The callback must be quick and must not block on
    /// another event. A panic in it aborts the process (it cannot unwind into
    /// the library).
    pub fn on_ready<F>(&self, callback: F) -> Result<()>
    where
        F: FnOnce(Result<()>) + Send + 'static,
    {
        type Callback = Box<dyn FnOnce(Result<()>) + Send>;

        unsafe extern "C" fn trampoline(status: *const sys::kiln_status_t, user_data: *mut c_void) {
            // SAFETY: `user_data` is the `Box<Callback>` leaked below; the library
            // calls this exactly once. `status` is NULL or valid during the call.
            let callback = unsafe { Box::from_raw(user_data.cast::<Callback>()) };
            let outcome = unsafe { status_result(status) };
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || callback(outcome))).is_err() {
                std::process::abort();
            }
        }

        let user_data = Box::into_raw(Box::new(Box::new(callback) as Callback));
        // SAFETY: live handle; `trampoline` takes back the box exactly once.
        let registered =
            check(unsafe { sys::kiln_event_on_ready(self.raw.as_ptr(), Some(trampoline), user_data.cast()) });
        if registered.is_err() {
            // A failed call took nothing over: the callback is still ours.
            drop(unsafe { Box::from_raw(user_data) });
        }
        registered
    }
}

impl Future for Event {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        let state = match &this.future {
            Some(state) => Arc::clone(state),
            None => {
                let state = Arc::new(Mutex::new(FutureState { outcome: None, waker: Some(cx.waker().clone()) }));
                this.future = Some(Arc::clone(&state));
                let shared = Arc::clone(&state);
                // The callback may run at once, on this thread: no lock is held here.
                this.on_ready(move |outcome| {
                    let waker = {
                        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                        s.outcome = Some(outcome);
                        s.waker.take()
                    };
                    if let Some(waker) = waker {
                        waker.wake();
                    }
                })?;
                state
            }
        };
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        match &s.outcome {
            Some(outcome) => Poll::Ready(outcome.clone()),
            None => {
                if !s.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    s.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: owned handle; destroying it cancels nothing (registered
        // callbacks own what they use).
        unsafe { sys::kiln_event_destroy(self.raw.as_ptr()) }
    }
}
