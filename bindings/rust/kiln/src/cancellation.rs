//! Stopping running executions from another thread.

use std::ptr::{self, NonNull};

use kiln_sys as sys;

use crate::error::{check, Result};

/// A one-shot switch that stops the executions given it (through
/// [`ExecuteOptions::cancellation`](crate::ExecuteOptions::cancellation)).
///
/// [`Cancellation::cancel`] makes every [`Executable::execute_with`](crate::Executable::execute_with)
/// running with it return [`Code::Cancelled`](crate::Code::Cancelled) at its
/// next check (between steps and at every `while` back-edge, so even a loop
/// that never ends stops); an execution given it after it was cancelled returns
/// `Cancelled` before it runs. It stays cancelled: make a new one for the next
/// run. The executable, its client and the argument buffers stay usable.
///
/// Thread-safe (`Send + Sync`): share it by reference (or in an `Arc`) with the
/// thread that cancels. The borrow in `ExecuteOptions` keeps it alive while an
/// execution uses it; `Drop` frees it.
///
/// ```
/// # fn main() -> kiln::Result<()> {
/// # let hlo = "HloModule forever
/// # cond {
/// #   s = f32[] parameter(0)
/// #   ROOT yes = pred[] constant(true)
/// # }
/// # body {
/// #   s = f32[] parameter(0)
/// #   one = f32[] constant(1)
/// #   ROOT next = f32[] add(s, one)
/// # }
/// # ENTRY e {
/// #   x = f32[] parameter(0)
/// #   ROOT loop = f32[] while(x), condition=cond, body=body
/// # }
/// # ";
/// let client = kiln::Client::new()?;
/// let forever = client.compile(&kiln::Computation::from_hlo_text(hlo)?)?; // a loop that never ends
/// let x = client.buffer_from_slice(&[0.0f32], &[])?;
/// let cancellation = kiln::Cancellation::new()?;
/// let options = kiln::ExecuteOptions::default().with_cancellation(&cancellation);
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         std::thread::sleep(std::time::Duration::from_millis(50));
///         cancellation.cancel();
///     });
///     let err = forever.execute_with(&[&x], &options).unwrap_err();
///     assert_eq!(err.code(), kiln::Code::Cancelled);
/// });
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Cancellation {
    raw: NonNull<sys::kiln_cancellation_t>,
}

// SAFETY: kiln.h: kiln_cancellation_cancel is thread-safe (one atomic store) and
// kiln_cancellation_is_cancelled reads that atomic; the handle has no other state.
unsafe impl Send for Cancellation {}
unsafe impl Sync for Cancellation {}

impl Cancellation {
    /// A cancellation that is not cancelled.
    pub fn new() -> Result<Cancellation> {
        let mut raw = ptr::null_mut();
        // SAFETY: valid out-parameter; on success the caller owns the handle.
        check(unsafe { sys::kiln_cancellation_create(&mut raw) })?;
        Ok(Cancellation { raw: NonNull::new(raw).expect("kiln_cancellation_create returned NULL") })
    }

    /// Stops every execution running with this cancellation, on any thread, and
    /// makes later ones given it fail at once. Calling it again does nothing.
    pub fn cancel(&self) {
        // SAFETY: live handle (borrowed); the call is thread-safe.
        unsafe { sys::kiln_cancellation_cancel(self.raw.as_ptr()) }
    }

    /// Whether [`Cancellation::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        let mut cancelled = 0;
        // SAFETY: live handle and valid out-parameter. The call only fails for NULL
        // arguments, which these are not, so the status is always OK.
        let status = check(unsafe { sys::kiln_cancellation_is_cancelled(self.raw.as_ptr(), &mut cancelled) });
        debug_assert!(status.is_ok(), "{status:?}");
        cancelled != 0
    }

    /// The raw handle, for use with `kiln-sys`. Owned by `self`.
    pub fn as_raw(&self) -> *mut sys::kiln_cancellation_t {
        self.raw.as_ptr()
    }
}

impl Drop for Cancellation {
    fn drop(&mut self) {
        // SAFETY: owned handle. No execution can still borrow it here; kiln.h would
        // allow destroying it under a running one anyway.
        unsafe { sys::kiln_cancellation_destroy(self.raw.as_ptr()) }
    }
}
