//! A foreign framework's f32[2,3] DLPack tensor, for the DLPack tests
//! (`dlpack.rs` on the host, `cuda_memory.rs` on the fake CUDA driver): both
//! managed structs over the same memory, whose deleters count their calls.
#![allow(dead_code)] // each test crate uses its part

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use kiln::sys;

/// Boxed: the structs point into it. `data` holds a host tensor's elements
/// (empty for one over another device's memory).
pub struct Foreign {
    pub data: Vec<f32>,
    pub shape: [i64; 2],
    pub strides: [i64; 2],
    pub deletions: AtomicUsize,
    pub versioned: sys::DLManagedTensorVersioned,
    pub legacy: sys::DLManagedTensor,
}

unsafe extern "C" fn delete_versioned(tensor: *mut sys::DLManagedTensorVersioned) {
    let foreign = unsafe { &*(*tensor).manager_ctx.cast::<Foreign>() };
    foreign.deletions.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn delete_legacy(tensor: *mut sys::DLManagedTensor) {
    let foreign = unsafe { &*(*tensor).manager_ctx.cast::<Foreign>() };
    foreign.deletions.fetch_add(1, Ordering::SeqCst);
}

impl Foreign {
    /// A host (`kDLCPU` 0) tensor over a copy of `values` (6 of them).
    pub fn host(values: &[f32]) -> Box<Foreign> {
        let mut f = Self::build(
            values.to_vec(),
            std::ptr::null_mut(),
            sys::DLDevice { device_type: sys::kDLCPU, device_id: 0 },
        );
        let data = f.data.as_mut_ptr().cast();
        f.versioned.dl_tensor.data = data;
        f.legacy.dl_tensor.data = data;
        f
    }

    /// A tensor at `address` on `device`, over memory the caller owns.
    pub fn on_device(address: u64, device: sys::DLDevice) -> Box<Foreign> {
        Self::build(Vec::new(), address as *mut c_void, device)
    }

    fn build(data: Vec<f32>, at: *mut c_void, device: sys::DLDevice) -> Box<Foreign> {
        let tensor = sys::DLTensor {
            data: at,
            device,
            ndim: 2,
            dtype: sys::DLDataType { code: sys::kDLFloat, bits: 32, lanes: 1 },
            shape: std::ptr::null_mut(),
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        };
        let mut f = Box::new(Foreign {
            data,
            shape: [2, 3],
            strides: [3, 1],
            deletions: AtomicUsize::new(0),
            versioned: sys::DLManagedTensorVersioned {
                version: sys::DLPackVersion { major: sys::DLPACK_MAJOR_VERSION, minor: 1 },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_versioned),
                flags: 0,
                dl_tensor: tensor,
            },
            legacy: sys::DLManagedTensor {
                dl_tensor: tensor,
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_legacy),
            },
        });
        let ctx: *mut Foreign = &mut *f;
        let (shape, strides) = (f.shape.as_mut_ptr(), f.strides.as_mut_ptr());
        for t in [&mut f.versioned.dl_tensor, &mut f.legacy.dl_tensor] {
            t.shape = shape;
            t.strides = strides;
        }
        f.versioned.manager_ctx = ctx.cast();
        f.legacy.manager_ctx = ctx.cast();
        f
    }

    /// The first element of a host tensor.
    pub fn data_ptr(&self) -> *const c_void {
        self.data.as_ptr().cast()
    }

    pub fn deletions(&self) -> usize {
        self.deletions.load(Ordering::SeqCst)
    }
}
