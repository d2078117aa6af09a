//! Raw CUDA device memory: where a buffer of a "cuda" client lies
//! ([`Buffer::cuda_memory`]), and buffers over GPU memory another library
//! owns ([`Device::buffer_alias_cuda_memory`]). DLPack's `kDLCUDA` is the
//! same exchange through [`crate::DlpackTensor`].

use std::ffi::c_void;
use std::ptr;

use kiln_sys as sys;

use crate::client::opt_ptr;
use crate::error::{check, Result};
use crate::types::ElementType;
use crate::{Buffer, Device};

/// Where a buffer lies in GPU memory: the GPU's CUDA device ordinal and the
/// `CUdeviceptr` of its row-major bytes (0 for an array without elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CudaMemory {
    /// The GPU's CUDA device ordinal.
    pub ordinal: i32,
    /// The device address (`CUdeviceptr`) of the first byte.
    pub address: u64,
}

impl Buffer<'_> {
    /// Where the buffer (once it is ready: else the error of the execution
    /// that was to fill it) lies in GPU memory; `None` for a buffer of a
    /// backend other than "cuda". The memory stays valid while the buffer
    /// lives; never write through it (Kiln buffers are immutable).
    pub fn cuda_memory(&self) -> Result<Option<CudaMemory>> {
        let (mut ordinal, mut address) = (0, 0);
        match check(unsafe { sys::kiln_buffer_cuda_memory(self.as_raw(), &mut ordinal, &mut address) }) {
            Ok(()) => Ok(Some(CudaMemory { ordinal, address })),
            // The call fails for a buffer that is not ready (then so does any
            // read of it) and for one of another backend (then a read works).
            Err(e) => self.is_host_alias().map(|_| None).map_err(|_| e),
        }
    }
}

impl<'c> Device<'c> {
    /// A buffer over CUDA device memory the caller owns (another library's
    /// allocation on this device's GPU, in the primary context), read in
    /// place: no copy. This device belongs to a "cuda" client; `address` (a
    /// `CUdeviceptr`) holds the array's bytes in row-major order, aligned to
    /// the element type (a complex type to its parts' width); it may be 0 only
    /// for an array without elements. Work queued on that memory must be
    /// complete, or queued on the legacy default stream, which this call
    /// synchronises.
    ///
    /// `release` runs exactly once, on whatever thread the library releases
    /// the memory: once the buffer and every execution reading it are gone,
    /// or before this returns when it fails. [`crate::Code::InvalidArgument`],
    /// naming the call: a device of another backend (its memory is not CUDA
    /// memory), a misaligned or 0 address, a bad shape.
    ///
    /// # Safety
    /// `address` must be memory of this device's GPU holding the array, and
    /// stay allocated and unchanged until `release` runs.
    pub unsafe fn buffer_alias_cuda_memory<F: FnOnce() + Send + 'static>(
        &self,
        element_type: ElementType,
        dims: &[i64],
        address: u64,
        release: F,
    ) -> Result<Buffer<'c>> {
        unsafe extern "C" fn run_release<F: FnOnce()>(user_data: *mut c_void) {
            // SAFETY: the `Box<F>` leaked below; the library releases it once.
            let release = unsafe { Box::from_raw(user_data.cast::<F>()) };
            release();
        }
        let user_data = Box::into_raw(Box::new(release));
        let mut raw = ptr::null_mut();
        // SAFETY: the memory's validity is the caller's promise; the library
        // calls `run_release` exactly once, also when the call fails.
        check(unsafe {
            sys::kiln_device_buffer_alias_cuda_memory(
                self.as_raw(),
                element_type.raw(),
                opt_ptr(dims),
                dims.len(),
                address,
                Some(run_release::<F>),
                user_data.cast(),
                &mut raw,
            )
        })?;
        Ok(unsafe { Buffer::from_raw(raw) })
    }
}
