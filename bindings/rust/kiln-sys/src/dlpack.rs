//! DLPack's exchange structs (`dlpack.h`), as DLPack 1.x lays them out, for
//! the DLPack functions of `kiln.h` (which only names the structs).
//!
//! Declared here rather than taken from a system `dlpack.h`: Debian's is 0.6,
//! which lacks the versioned struct. The names are DLPack's. `systest` checks
//! sizes, offsets and values against the installed `dlpack.h` where it has
//! them (the versioned struct and the 1.x flags against DLPack 1.0's layout
//! when the header predates it).

use core::ffi::c_void;

/// `DLDeviceType`: where a tensor's memory lives.
pub type DLDeviceType = i32;
pub const kDLCPU: DLDeviceType = 1;
pub const kDLCUDA: DLDeviceType = 2;
/// Pinned host memory (readable by the CPU).
pub const kDLCUDAHost: DLDeviceType = 3;
pub const kDLOpenCL: DLDeviceType = 4;
pub const kDLVulkan: DLDeviceType = 7;
pub const kDLMetal: DLDeviceType = 8;
pub const kDLVPI: DLDeviceType = 9;
pub const kDLROCM: DLDeviceType = 10;
pub const kDLROCMHost: DLDeviceType = 11;
pub const kDLExtDev: DLDeviceType = 12;
pub const kDLCUDAManaged: DLDeviceType = 13;
pub const kDLOneAPI: DLDeviceType = 14;
pub const kDLWebGPU: DLDeviceType = 15;
pub const kDLHexagon: DLDeviceType = 16;

/// `DLDataTypeCode` (as stored in [`DLDataType::code`]).
pub type DLDataTypeCode = u8;
pub const kDLInt: DLDataTypeCode = 0;
pub const kDLUInt: DLDataTypeCode = 1;
pub const kDLFloat: DLDataTypeCode = 2;
pub const kDLOpaqueHandle: DLDataTypeCode = 3;
pub const kDLBfloat: DLDataTypeCode = 4;
pub const kDLComplex: DLDataTypeCode = 5;
/// Since DLPack 0.8.
pub const kDLBool: DLDataTypeCode = 6;

/// The DLPack major version whose layout these declarations follow (the one
/// Kiln reads), and the version Kiln writes into exported tensors (1.0).
pub const DLPACK_MAJOR_VERSION: u32 = 1;
pub const DLPACK_MINOR_VERSION: u32 = 0;

/// [`DLManagedTensorVersioned::flags`]: the consumer must not write through
/// the tensor.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// [`DLManagedTensorVersioned::flags`]: the producer copied the data.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDataType {
    pub code: DLDataTypeCode,
    pub bits: u8,
    pub lanes: u16,
}

/// A strided view of an array (not owning).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    /// The allocation; the first element is at `data + byte_offset`.
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or NULL for compact row-major.
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// A pre-1.0 managed tensor: a tensor and the deleter its consumer calls
/// exactly once when done with it.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// A DLPack 1.x managed tensor: the version first (stable across 1.x), the
/// deleter its consumer calls exactly once, flags (`DLPACK_FLAG_BITMASK_*`)
/// and the tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}
