//! Safe Rust bindings for Kiln, an XLA-style array compiler and runtime.
//!
//! The binding is thin: every piece of logic lives in `libkiln` behind
//! `kiln.h`; this crate marshals arguments and owns handles.
//!
//! ```
//! use kiln::{Builder, Client, ElementType};
//!
//! # fn main() -> kiln::Result<()> {
//! let b = Builder::new("axpy")?;
//! let x = b.parameter(0, ElementType::F32, &[3], "x");
//! let y = b.parameter(1, ElementType::F32, &[3], "y");
//! let two = b.constant_scalar(2.0f32);
//! let computation = b.build(b.mul(two, x) + y)?;
//!
//! let client = Client::new()?;
//! let exe = client.compile(&computation)?;
//! let x = client.buffer_from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
//! let y = client.buffer_from_slice(&[10.0f32, 20.0, 30.0], &[3])?;
//! let out = exe.execute(&[&x, &y])?;
//! assert_eq!(out[0].to_vec::<f32>()?, [12.0, 24.0, 36.0]);
//! # Ok(())
//! # }
//! ```
//!
//! Ownership: [`Client`], [`Computation`] and [`Builder`] are owned values.
//! [`Buffer`] and [`Executable`] borrow their client, and [`Op`] borrows its
//! builder, so none can outlive its parent. Errors are [`Error`], carrying the
//! library's [`Code`] and message.
//!
//! Deadlines and cancellation: [`Executable::execute_with`] takes an
//! [`ExecuteOptions`] with a `timeout` ([`Code::DeadlineExceeded`]) and a
//! borrowed [`Cancellation`] that another thread may cancel
//! ([`Code::Cancelled`]); either stops even a `while` loop that never ends.
//!
//! Devices, events and asynchronous execution: [`Client::devices`] gives the
//! client's [`Device`]s (a host backend presents as many as
//! [`ClientOptions::num_devices`] asks for); buffers are made on a device
//! ([`Device::buffer_from_slice`], zero-copy [`Device::buffer_alias_host`]) and
//! moved with [`Buffer::copy_to`]; [`ExecuteOptions::device`] picks where to
//! run. [`Executable::execute_async`] returns the results at once and an
//! [`Event`] (blocking [`Event::wait`], [`Event::on_ready`], or `.await`);
//! [`Executable::execute_donating`] gives buffers over to the execution.
//!
//! DLPack: [`Buffer::to_dlpack_versioned`] (or the legacy [`Buffer::to_dlpack`])
//! exports a buffer as an owned [`DlpackTensor`] over its own host memory on
//! the host backends (hand it on with [`DlpackTensor::into_raw`]);
//! [`Device::buffer_from_dlpack_versioned`] imports a foreign tensor, read in
//! place on "cpu". On "cuda" both are zero-copy in GPU memory (`kDLCUDA`,
//! the GPU's ordinal as `device_id`).
//!
//! Raw CUDA memory: [`Buffer::cuda_memory`] gives a cuda buffer's GPU ordinal
//! and device address ([`CudaMemory`]); [`Device::buffer_alias_cuda_memory`]
//! makes a buffer over GPU memory another library owns, with a closure run
//! exactly once when the library no longer reads it.
//!
//! Safetensors files: [`SafetensorsFile::open`] checks a file's header and
//! reads tensors by name ([`SafetensorsFile::read`]) onto a [`Device`];
//! [`safetensors::load`] reads them all and [`safetensors::save`] writes
//! buffers with metadata.
//!
//! A buffer cannot outlive its client:
//! ```compile_fail
//! let buffer = {
//!     let client = kiln::Client::new().unwrap();
//!     client.buffer_from_slice(&[1.0f32], &[1]).unwrap()
//! };
//! ```
//! A builder may not be shared between threads (it is `Send` but not `Sync`):
//! ```compile_fail
//! fn shared<T: Sync>(_: &T) {}
//! shared(&kiln::Builder::new("b").unwrap());
//! ```
//! while clients, computations, executables, buffers and cancellations may:
//! ```
//! fn shared<T: Send + Sync>() {}
//! shared::<kiln::Client>();
//! shared::<kiln::Computation>();
//! shared::<kiln::Executable<'static>>();
//! shared::<kiln::Buffer<'static>>();
//! shared::<kiln::Cancellation>();
//! shared::<kiln::Device<'static>>();
//! shared::<kiln::Event>();
//! ```
//! and execute options cannot outlive the cancellation they borrow:
//! ```compile_fail
//! let options = {
//!     let cancellation = kiln::Cancellation::new().unwrap();
//!     kiln::ExecuteOptions::default().with_cancellation(&cancellation)
//! };
//! ```

mod builder;
mod cancellation;
mod client;
mod cuda_memory;
mod device;
mod dlpack;
mod error;
mod event;
pub mod safetensors;
mod types;
mod user_ops;

use std::ffi::CStr;

pub use builder::{
    Builder, ComparisonDirection, ComparisonType, Computation, ConvDimensionNumbers, DotDimensionNumbers, FftType,
    GatherDimensionNumbers, Op, Padding, Precision, RngAlgorithm, ScatterDimensionNumbers,
};
pub use cancellation::Cancellation;
pub use client::{Argument, Buffer, Client, ClientOptions, CompileOptions, Executable, ExecuteOptions};
pub use cuda_memory::CudaMemory;
pub use device::{AlignedVec, Device, HostArray};
pub use dlpack::{DlpackLegacyTensor, DlpackTensor, ManagedTensor};
pub use error::{Code, Error, Result};
pub use event::Event;
pub use kiln_sys as sys;
pub use safetensors::SafetensorsFile;
pub use types::{Element, ElementType, Shape};
pub use user_ops::{
    register_device_kernel, register_kernel, registered_ops, AttrValue, GradFrame, KernelFrame, OpDef, ShapeFrame,
};

use error::{borrowed_str, c_string, check};

/// The library's version, "MAJOR.MINOR.PATCH".
pub fn version() -> &'static str {
    // SAFETY: static string.
    unsafe { CStr::from_ptr(sys::kiln_version()) }.to_str().unwrap_or("?")
}

/// Names of the backends this library contains ("interpreter", "cpu", ...).
pub fn backends() -> Result<Vec<&'static str>> {
    let mut n = 0;
    check(unsafe { sys::kiln_backend_count(&mut n) })?;
    (0..n)
        .map(|i| {
            let mut name = std::ptr::null();
            check(unsafe { sys::kiln_backend_name(i, &mut name) })?;
            // SAFETY: owned by the library for the life of the process.
            Ok(unsafe { borrowed_str(name) })
        })
        .collect()
}

/// A custom-call target: `out` points at the result's data (for a tuple, at an
/// array of pointers to the leaves' data), `inputs[i]` at operand i's.
pub type CustomCallFn = unsafe extern "C" fn(out: *mut std::ffi::c_void, inputs: *mut *const std::ffi::c_void);

/// Registers `f` as the process-wide custom-call target `name`.
///
/// # Safety
/// `f` must read and write exactly the shapes of every custom call that names
/// it, and must not unwind.
pub unsafe fn register_custom_call(name: &str, f: CustomCallFn) -> Result<()> {
    let name = c_string("custom-call name", name)?;
    check(sys::kiln_register_custom_call(name.as_ptr(), Some(f)))
}
