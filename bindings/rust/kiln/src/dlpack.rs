//! DLPack exchange at the pointer level: buffers exported as DLPack tensors
//! ([`Buffer::to_dlpack_versioned`], [`Buffer::to_dlpack`]) and foreign
//! tensors imported as buffers ([`Device::buffer_from_dlpack_versioned`],
//! [`Device::buffer_from_dlpack`]).

use std::ffi::c_void;
use std::fmt;
use std::ptr::{self, NonNull};

use kiln_sys as sys;

use crate::error::{check, Code, Error, Result};
use crate::types::{Element, ElementType};
use crate::{Buffer, Device};

mod sealed {
    pub trait Sealed {}
    impl Sealed for kiln_sys::DLManagedTensorVersioned {}
    impl Sealed for kiln_sys::DLManagedTensor {}
}

/// The two managed-tensor structs of DLPack: [`sys::DLManagedTensorVersioned`]
/// (1.x, with a version and flags) and the legacy [`sys::DLManagedTensor`].
pub trait ManagedTensor: sealed::Sealed {
    #[doc(hidden)]
    fn dl_tensor(&self) -> &sys::DLTensor;
    #[doc(hidden)]
    fn version_and_flags(&self) -> Option<(sys::DLPackVersion, u64)>;
    /// Calls the deleter, if any.
    #[doc(hidden)]
    unsafe fn delete(this: *mut Self);
    /// `kiln_device_buffer_from_dlpack(_versioned)`.
    #[doc(hidden)]
    unsafe fn import(
        device: *mut sys::kiln_device_t,
        this: *mut Self,
        out: *mut *mut sys::kiln_buffer_t,
    ) -> *mut sys::kiln_status_t;
}

impl ManagedTensor for sys::DLManagedTensorVersioned {
    fn dl_tensor(&self) -> &sys::DLTensor {
        &self.dl_tensor
    }
    fn version_and_flags(&self) -> Option<(sys::DLPackVersion, u64)> {
        Some((self.version, self.flags))
    }
    unsafe fn delete(this: *mut Self) {
        if let Some(deleter) = (*this).deleter {
            deleter(this);
        }
    }
    unsafe fn import(
        device: *mut sys::kiln_device_t,
        this: *mut Self,
        out: *mut *mut sys::kiln_buffer_t,
    ) -> *mut sys::kiln_status_t {
        sys::kiln_device_buffer_from_dlpack_versioned(device, this, out)
    }
}

impl ManagedTensor for sys::DLManagedTensor {
    fn dl_tensor(&self) -> &sys::DLTensor {
        &self.dl_tensor
    }
    fn version_and_flags(&self) -> Option<(sys::DLPackVersion, u64)> {
        None
    }
    unsafe fn delete(this: *mut Self) {
        if let Some(deleter) = (*this).deleter {
            deleter(this);
        }
    }
    unsafe fn import(
        device: *mut sys::kiln_device_t,
        this: *mut Self,
        out: *mut *mut sys::kiln_buffer_t,
    ) -> *mut sys::kiln_status_t {
        sys::kiln_device_buffer_from_dlpack(device, this, out)
    }
}

/// An owned DLPack tensor: by default a DLPack 1.x
/// [`sys::DLManagedTensorVersioned`], or, as [`DlpackLegacyTensor`], a
/// pre-1.0 [`sys::DLManagedTensor`]. Its deleter is called exactly once: on
/// `Drop`, or by whoever receives the pointer from [`DlpackTensor::into_raw`].
///
/// One exported by Kiln ([`Buffer::to_dlpack_versioned`]) keeps its memory
/// alive on its own: it does not borrow the buffer or the client, which may
/// go first. Its memory is read-only (Kiln buffers are immutable).
pub struct DlpackTensor<M: ManagedTensor = sys::DLManagedTensorVersioned> {
    raw: NonNull<M>,
}

/// A pre-1.0 DLPack tensor ([`sys::DLManagedTensor`]), which has no version
/// and no flags.
pub type DlpackLegacyTensor = DlpackTensor<sys::DLManagedTensor>;

// SAFETY: Kiln's tensors are immutable and may be deleted from any thread;
// `from_raw` asks the same of foreign ones.
unsafe impl<M: ManagedTensor> Send for DlpackTensor<M> {}
unsafe impl<M: ManagedTensor> Sync for DlpackTensor<M> {}

impl<M: ManagedTensor> DlpackTensor<M> {
    /// Takes over a managed tensor (e.g. one a foreign producer handed out),
    /// to read it or to give it to [`Device::buffer_from_dlpack_tensor`].
    ///
    /// # Safety
    /// `raw` must be a valid managed tensor of this struct's DLPack version
    /// that the caller owns (its deleter not yet called); its fields and the
    /// memory it describes must stay valid and unchanged until the deleter is
    /// called, which may happen on any thread.
    pub unsafe fn from_raw(raw: *mut M) -> Option<DlpackTensor<M>> {
        NonNull::new(raw).map(|raw| DlpackTensor { raw })
    }

    /// Gives up ownership: the caller (e.g. a foreign consumer) must call
    /// the tensor's deleter exactly once.
    pub fn into_raw(self) -> *mut M {
        let raw = self.raw.as_ptr();
        std::mem::forget(self);
        raw
    }

    /// The managed struct, for reading its fields (owned by `self`).
    pub fn as_raw(&self) -> *mut M {
        self.raw.as_ptr()
    }

    fn managed(&self) -> &M {
        // SAFETY: valid while self lives (from_raw's contract / Kiln's export).
        unsafe { self.raw.as_ref() }
    }

    /// The tensor: pointer, device, dtype, shape, strides, offset.
    pub fn dl_tensor(&self) -> &sys::DLTensor {
        self.managed().dl_tensor()
    }

    /// The first element (`data + byte_offset`).
    pub fn data_ptr(&self) -> *const c_void {
        let t = self.dl_tensor();
        t.data.cast::<u8>().wrapping_add(t.byte_offset as usize).cast_const().cast()
    }

    /// Where the memory lives (Kiln exports to `kDLCPU` 0, or `kDLCUDA` and
    /// the GPU's ordinal from "cuda").
    pub fn device(&self) -> sys::DLDevice {
        self.dl_tensor().device
    }

    /// DLPack's dtype (`code`, `bits`, `lanes`).
    pub fn dtype(&self) -> sys::DLDataType {
        self.dl_tensor().dtype
    }

    /// The Kiln element type of the dtype, `None` when Kiln has none.
    pub fn element_type(&self) -> Option<ElementType> {
        element_type_of(self.dtype())
    }

    /// The extents (`ndim` of them).
    pub fn shape(&self) -> &[i64] {
        let t = self.dl_tensor();
        // SAFETY: DLPack: `shape` holds `ndim` extents while the tensor lives.
        unsafe { slice_or_empty(t.shape, t.ndim) }
    }

    /// The strides in elements; `None` when the tensor leaves them NULL
    /// (compact row-major). Kiln always sets them.
    pub fn strides(&self) -> Option<&[i64]> {
        let t = self.dl_tensor();
        // SAFETY: as for shape.
        (!t.strides.is_null()).then(|| unsafe { slice_or_empty(t.strides, t.ndim) })
    }

    /// The version of a DLPack 1.x tensor, `None` for a legacy one.
    pub fn version(&self) -> Option<sys::DLPackVersion> {
        self.managed().version_and_flags().map(|(v, _)| v)
    }

    /// `DLPACK_FLAG_BITMASK_*` of a DLPack 1.x tensor; 0 for a legacy one.
    pub fn flags(&self) -> u64 {
        self.managed().version_and_flags().map_or(0, |(_, f)| f)
    }

    /// Whether the consumer must not write through it (always, for Kiln's).
    pub fn is_read_only(&self) -> bool {
        self.flags() & sys::DLPACK_FLAG_BITMASK_READ_ONLY != 0
    }

    /// Whether the producer copied the data (Kiln does, from backends whose
    /// memory is not host memory).
    pub fn is_copied(&self) -> bool {
        self.flags() & sys::DLPACK_FLAG_BITMASK_IS_COPIED != 0
    }

    /// The elements, row-major, read in place: for host memory (`kDLCPU`,
    /// `kDLCUDAHost`) of `T`'s dtype that is compact row-major and aligned
    /// for `T`; otherwise [`Code::InvalidArgument`].
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let t = self.dl_tensor();
        let refuse = |why: String| Err(Error::new(Code::InvalidArgument, format!("DlpackTensor::as_slice: {why}")));
        if t.device.device_type != sys::kDLCPU && t.device.device_type != sys::kDLCUDAHost {
            return refuse(format!("the tensor lives on DLPack device type {}", t.device.device_type));
        }
        if self.element_type() != Some(T::TYPE) {
            let d = t.dtype;
            return refuse(format!("dtype (code {}, {} bits, {} lanes) is not {}", d.code, d.bits, d.lanes, T::TYPE));
        }
        let shape = self.shape();
        if shape.iter().any(|&d| d < 0) {
            return refuse(format!("negative extent in {shape:?}"));
        }
        if let Some(strides) = self.strides() {
            let mut expected = 1i64;
            for (&d, &s) in shape.iter().zip(strides).rev() {
                if d != 1 && s != expected {
                    return refuse(format!("strides {strides:?} are not row-major for shape {shape:?}"));
                }
                expected = expected.saturating_mul(d);
            }
        }
        let len = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d as usize));
        let Some(len) = len else { return refuse(format!("shape {shape:?} overflows")) };
        if len == 0 {
            return Ok(&[]);
        }
        let data = self.data_ptr().cast::<T>();
        if data.is_null() || data as usize % std::mem::align_of::<T>() != 0 {
            return refuse(format!("data {data:?} is not aligned for {}", T::TYPE));
        }
        // SAFETY: host memory holding `len` elements of T (dtype and shape say
        // so), aligned, alive and unchanged while self lives (Kiln's tensors
        // are immutable; from_raw's contract for others). PRED is 0 or 1.
        Ok(unsafe { std::slice::from_raw_parts(data, len) })
    }
}

impl<M: ManagedTensor> Drop for DlpackTensor<M> {
    fn drop(&mut self) {
        // SAFETY: owned; the deleter is called once, here.
        unsafe { M::delete(self.raw.as_ptr()) }
    }
}

impl<M: ManagedTensor> fmt::Debug for DlpackTensor<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DlpackTensor")
            .field("data", &self.data_ptr())
            .field("device", &self.device())
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("version", &self.version())
            .field("flags", &self.flags())
            .finish()
    }
}

/// # Safety
/// `p` must point at `n` values when `n > 0`.
unsafe fn slice_or_empty<'a>(p: *const i64, n: i32) -> &'a [i64] {
    if p.is_null() || n <= 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n as usize)
    }
}

/// Kiln's element type for a DLPack dtype (lanes 1), as kiln.h maps them.
fn element_type_of(d: sys::DLDataType) -> Option<ElementType> {
    use ElementType::*;
    if d.lanes != 1 {
        return None;
    }
    Some(match (d.code, d.bits) {
        (sys::kDLBool, 8) => Pred,
        (sys::kDLInt, 8) => S8,
        (sys::kDLInt, 16) => S16,
        (sys::kDLInt, 32) => S32,
        (sys::kDLInt, 64) => S64,
        (sys::kDLUInt, 8) => U8,
        (sys::kDLUInt, 16) => U16,
        (sys::kDLUInt, 32) => U32,
        (sys::kDLUInt, 64) => U64,
        (sys::kDLFloat, 16) => F16,
        (sys::kDLFloat, 32) => F32,
        (sys::kDLFloat, 64) => F64,
        (sys::kDLBfloat, 16) => BF16,
        (sys::kDLComplex, 64) => C64,
        (sys::kDLComplex, 128) => C128,
        _ => return None,
    })
}

impl Buffer<'_> {
    /// Exports the buffer as a DLPack 1.x tensor, once it is ready (the error
    /// of the execution that was to fill it, if that failed). On the host
    /// backends ("cpu", "interpreter") it points at the buffer's own memory
    /// (`kDLCPU` 0); on "cuda" at the buffer's own GPU memory, not copied
    /// (`kDLCUDA`, `device_id` the GPU's CUDA ordinal, the data complete on
    /// the GPU: see [`Buffer::cuda_memory`]); elsewhere at a host copy
    /// ([`DlpackTensor::is_copied`], `kDLCPU` 0). Always read-only, with
    /// row-major strides. The tensor keeps the memory alive by itself: the
    /// buffer and its client may be dropped first.
    pub fn to_dlpack_versioned(&self) -> Result<DlpackTensor> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_buffer_to_dlpack_versioned(self.as_raw(), &mut raw) })?;
        // SAFETY: an owned tensor.
        Ok(unsafe { DlpackTensor::from_raw(raw) }.expect("kiln_buffer_to_dlpack_versioned returned NULL"))
    }

    /// As [`Buffer::to_dlpack_versioned`], as a pre-1.0 tensor, which has no
    /// flags to say that it is read-only or copied: for consumers that know
    /// only the legacy struct.
    pub fn to_dlpack(&self) -> Result<DlpackLegacyTensor> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_buffer_to_dlpack(self.as_raw(), &mut raw) })?;
        // SAFETY: an owned tensor.
        Ok(unsafe { DlpackTensor::from_raw(raw) }.expect("kiln_buffer_to_dlpack returned NULL"))
    }
}

impl<'c> Device<'c> {
    /// Imports a DLPack 1.x tensor as a buffer on this device, taking it
    /// over: its deleter (if not NULL) is called exactly once, whether the
    /// call succeeds or fails (when the buffer and every execution reading it
    /// are gone, or before this returns when the data was copied or refused).
    /// Host memory (`kDLCPU`, `kDLCUDAHost`), compact and row-major, is read
    /// in place where [`Device::buffer_alias_host`] would read it in place
    /// (the "cpu" backend), else copied. GPU memory (`kDLCUDA`) is read in
    /// place, as [`Device::buffer_alias_cuda_memory`] reads it, on a device
    /// of a "cuda" client whose CUDA ordinal is the tensor's `device_id`; its
    /// producer must have finished writing it, or queued the writes on the
    /// legacy default stream, which this call synchronises.
    /// [`Code::InvalidArgument`], naming the call, for NULL (nothing is
    /// deleted then), a major version other than 1, another device type, a
    /// `kDLCUDA` tensor given to another backend's device or another GPU's, a
    /// dtype Kiln lacks or lanes != 1, strides that are not row-major, GPU
    /// data not aligned to its element type.
    ///
    /// # Safety
    /// `tensor` must be NULL or a valid DLPack 1.x managed tensor the caller
    /// owns (its deleter not yet called). It and the memory it describes must
    /// stay valid and unchanged until the deleter runs, which may happen on
    /// any thread.
    pub unsafe fn buffer_from_dlpack_versioned(
        &self,
        tensor: *mut sys::DLManagedTensorVersioned,
    ) -> Result<Buffer<'c>> {
        self.import(tensor)
    }

    /// As [`Device::buffer_from_dlpack_versioned`], for a pre-1.0
    /// [`sys::DLManagedTensor`].
    ///
    /// # Safety
    /// As for [`Device::buffer_from_dlpack_versioned`], for the legacy struct.
    pub unsafe fn buffer_from_dlpack(&self, tensor: *mut sys::DLManagedTensor) -> Result<Buffer<'c>> {
        self.import(tensor)
    }

    /// As [`Device::buffer_from_dlpack_versioned`], for an owned
    /// [`DlpackTensor`] (e.g. one exported by a buffer of another client).
    pub fn buffer_from_dlpack_tensor<M: ManagedTensor>(&self, tensor: DlpackTensor<M>) -> Result<Buffer<'c>> {
        // SAFETY: an owned, valid tensor (DlpackTensor's invariant), handed over.
        unsafe { self.import(tensor.into_raw()) }
    }

    unsafe fn import<M: ManagedTensor>(&self, tensor: *mut M) -> Result<Buffer<'c>> {
        let mut raw = ptr::null_mut();
        check(M::import(self.as_raw(), tensor, &mut raw))?;
        Ok(Buffer::from_raw(raw))
    }
}
