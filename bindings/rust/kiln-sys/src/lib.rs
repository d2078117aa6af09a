//! Raw declarations of `kiln.h`, the C ABI of Kiln.
//!
//! Everything here is `unsafe` and mirrors the header one to one; the rules on
//! ownership, threads and errors are the header's. Use the `kiln` crate for a
//! safe interface.
//!
//! DLPack's structs, which the DLPack functions exchange and `kiln.h` only
//! names, are declared here as DLPack 1.x lays them out (`DLManagedTensor`,
//! `DLManagedTensorVersioned`, ...).
//!
//! Linking: `build.rs` takes the library directory from `KILN_LIB_DIR` when it is
//! set, else asks pkg-config for `kiln` (installed by Kiln's packaging).
#![no_std]
#![allow(non_camel_case_types)]
#![allow(non_upper_case_globals)] // DLPack's enum constants (kDLCPU, ...)

use core::ffi::{c_char, c_int, c_void};

mod dlpack;
pub use dlpack::*;

// Versions of the header these declarations were written against.
pub const KILN_VERSION_MAJOR: u32 = 0;
pub const KILN_VERSION_MINOR: u32 = 2;
pub const KILN_VERSION_PATCH: u32 = 0;
pub const KILN_VERSION_NUMBER: u32 = KILN_VERSION_MAJOR * 10000 + KILN_VERSION_MINOR * 100 + KILN_VERSION_PATCH;
/// The file name dlopen() loads: libkiln.so.<ABI major version>.
pub const KILN_LIBRARY_SONAME: &str = "libkiln.so.0";

/// Declares an opaque C type that can only be used behind a pointer.
macro_rules! opaque {
    ($($name:ident),* $(,)?) => {$(
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            _marker: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
        }
    )*};
}
opaque!(
    kiln_status_t,
    kiln_client_t,
    kiln_builder_t,
    kiln_computation_t,
    kiln_buffer_t,
    kiln_executable_t,
    kiln_cancellation_t,
    kiln_device_t,
    kiln_event_t,
    kiln_safetensors_t,
    kiln_user_op_def_t
);

pub type kiln_status_code_t = i32;
pub const KILN_STATUS_OK: kiln_status_code_t = 0;
pub const KILN_STATUS_CANCELLED: kiln_status_code_t = 1;
pub const KILN_STATUS_UNKNOWN: kiln_status_code_t = 2;
pub const KILN_STATUS_INVALID_ARGUMENT: kiln_status_code_t = 3;
pub const KILN_STATUS_DEADLINE_EXCEEDED: kiln_status_code_t = 4;
pub const KILN_STATUS_NOT_FOUND: kiln_status_code_t = 5;
pub const KILN_STATUS_ALREADY_EXISTS: kiln_status_code_t = 6;
pub const KILN_STATUS_PERMISSION_DENIED: kiln_status_code_t = 7;
pub const KILN_STATUS_RESOURCE_EXHAUSTED: kiln_status_code_t = 8;
pub const KILN_STATUS_FAILED_PRECONDITION: kiln_status_code_t = 9;
pub const KILN_STATUS_ABORTED: kiln_status_code_t = 10;
pub const KILN_STATUS_OUT_OF_RANGE: kiln_status_code_t = 11;
pub const KILN_STATUS_UNIMPLEMENTED: kiln_status_code_t = 12;
pub const KILN_STATUS_INTERNAL: kiln_status_code_t = 13;
pub const KILN_STATUS_UNAVAILABLE: kiln_status_code_t = 14;
pub const KILN_STATUS_DATA_LOSS: kiln_status_code_t = 15;

pub type kiln_element_type_t = i32;
pub const KILN_TYPE_INVALID: kiln_element_type_t = 0;
pub const KILN_TYPE_PRED: kiln_element_type_t = 1;
pub const KILN_TYPE_S8: kiln_element_type_t = 2;
pub const KILN_TYPE_S16: kiln_element_type_t = 3;
pub const KILN_TYPE_S32: kiln_element_type_t = 4;
pub const KILN_TYPE_S64: kiln_element_type_t = 5;
pub const KILN_TYPE_U8: kiln_element_type_t = 6;
pub const KILN_TYPE_U16: kiln_element_type_t = 7;
pub const KILN_TYPE_U32: kiln_element_type_t = 8;
pub const KILN_TYPE_U64: kiln_element_type_t = 9;
pub const KILN_TYPE_F16: kiln_element_type_t = 10;
pub const KILN_TYPE_BF16: kiln_element_type_t = 11;
pub const KILN_TYPE_F32: kiln_element_type_t = 12;
pub const KILN_TYPE_F64: kiln_element_type_t = 13;
pub const KILN_TYPE_C64: kiln_element_type_t = 14;
pub const KILN_TYPE_C128: kiln_element_type_t = 15;
pub const KILN_TYPE_TUPLE: kiln_element_type_t = 16;
pub const KILN_TYPE_TOKEN: kiln_element_type_t = 17;

pub type kiln_comparison_direction_t = i32;
pub const KILN_COMPARE_EQ: kiln_comparison_direction_t = 0;
pub const KILN_COMPARE_NE: kiln_comparison_direction_t = 1;
pub const KILN_COMPARE_GE: kiln_comparison_direction_t = 2;
pub const KILN_COMPARE_GT: kiln_comparison_direction_t = 3;
pub const KILN_COMPARE_LE: kiln_comparison_direction_t = 4;
pub const KILN_COMPARE_LT: kiln_comparison_direction_t = 5;

pub type kiln_comparison_type_t = i32;
pub const KILN_COMPARISON_TYPE_DEFAULT: kiln_comparison_type_t = 0;
pub const KILN_COMPARISON_TYPE_FLOAT: kiln_comparison_type_t = 1;
pub const KILN_COMPARISON_TYPE_TOTAL_ORDER: kiln_comparison_type_t = 2;
pub const KILN_COMPARISON_TYPE_SIGNED: kiln_comparison_type_t = 3;
pub const KILN_COMPARISON_TYPE_UNSIGNED: kiln_comparison_type_t = 4;

pub type kiln_precision_t = i32;
pub const KILN_PRECISION_DEFAULT: kiln_precision_t = 0;
pub const KILN_PRECISION_HIGH: kiln_precision_t = 1;
pub const KILN_PRECISION_HIGHEST: kiln_precision_t = 2;
pub type kiln_padding_t = i32;
pub const KILN_PADDING_VALID: kiln_padding_t = 0;
pub const KILN_PADDING_SAME: kiln_padding_t = 1;

pub type kiln_rng_algorithm_t = i32;
pub const KILN_RNG_DEFAULT: kiln_rng_algorithm_t = 0;
pub const KILN_RNG_THREE_FRY: kiln_rng_algorithm_t = 1;
pub const KILN_RNG_PHILOX: kiln_rng_algorithm_t = 2;

pub type kiln_fft_type_t = i32;
pub const KILN_FFT_FFT: kiln_fft_type_t = 0;
pub const KILN_FFT_IFFT: kiln_fft_type_t = 1;
pub const KILN_FFT_RFFT: kiln_fft_type_t = 2;
pub const KILN_FFT_IRFFT: kiln_fft_type_t = 3;

/// An op of one builder; `KILN_OP_INVALID` is what a failed op returns.
pub type kiln_op_t = i64;
pub const KILN_OP_INVALID: kiln_op_t = -1;

/// A custom-call target; `None` is a NULL function pointer.
pub type kiln_custom_call_fn = Option<unsafe extern "C" fn(out: *mut c_void, in_: *mut *const c_void)>;

/// Frees host memory given to `kiln_device_buffer_alias_host`; `None` is NULL.
pub type kiln_host_release_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// Kinds of a user-defined op's attribute values (`kiln_op_attr_t::kind`).
pub type kiln_op_attr_kind_t = i32;
pub const KILN_OP_ATTR_INT: kiln_op_attr_kind_t = 1;
pub const KILN_OP_ATTR_FLOAT: kiln_op_attr_kind_t = 2;
pub const KILN_OP_ATTR_BOOL: kiln_op_attr_kind_t = 3;
pub const KILN_OP_ATTR_STRING: kiln_op_attr_kind_t = 4;
pub const KILN_OP_ATTR_TYPE: kiln_op_attr_kind_t = 5;
pub const KILN_OP_ATTR_SHAPE: kiln_op_attr_kind_t = 6;
pub const KILN_OP_ATTR_TENSOR: kiln_op_attr_kind_t = 7;
pub const KILN_OP_ATTR_LIST: kiln_op_attr_kind_t = 8;

/// An attribute value of a user-defined op, as a kernel sees it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_op_attr_t {
    pub struct_size: usize,
    pub name: *const c_char,
    pub kind: kiln_op_attr_kind_t,
    pub i: i64,
    pub f: f64,
    pub s: *const c_char,
    pub s_size: usize,
    pub r#type: kiln_element_type_t,
    pub dims: *const i64,
    pub rank: usize,
    pub data: *const c_void,
    pub byte_size: usize,
    pub item_kind: kiln_op_attr_kind_t,
    pub num_items: usize,
    pub items: *const kiln_op_attr_t,
}

/// An argument or result of a user-defined op's kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_op_buffer_t {
    pub struct_size: usize,
    pub r#type: kiln_element_type_t,
    pub dims: *const i64,
    pub rank: usize,
    pub data: *mut c_void,
    pub byte_size: usize,
}

/// The typed call frame of a user-defined op's kernel or shape function.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_op_call_frame_t {
    pub struct_size: usize,
    pub op_name: *const c_char,
    pub backend: *const c_char,
    pub device: *mut c_void,
    pub stream: *mut c_void,
    pub user_data: *mut c_void,
    pub num_args: usize,
    pub args: *const kiln_op_buffer_t,
    pub num_results: usize,
    pub results: *const kiln_op_buffer_t,
    pub num_attrs: usize,
    pub attrs: *const kiln_op_attr_t,
}

/// A user-defined op's kernel; `None` is NULL.
pub type kiln_op_kernel_fn = Option<unsafe extern "C" fn(frame: *const kiln_op_call_frame_t) -> *mut kiln_status_t>;
/// A user-defined op's shape function; `None` is NULL.
pub type kiln_op_shape_fn = Option<unsafe extern "C" fn(frame: *mut kiln_op_call_frame_t) -> *mut kiln_status_t>;
/// A user-defined op's gradient; `None` is NULL.
pub type kiln_op_grad_fn = Option<
    unsafe extern "C" fn(
        builder: *mut kiln_builder_t,
        operands: *const kiln_op_t,
        num_operands: usize,
        outputs: *const kiln_op_t,
        output_grads: *const kiln_op_t,
        num_outputs: usize,
        attrs: *const kiln_op_attr_t,
        num_attrs: usize,
        operand_grads: *mut kiln_op_t,
        user_data: *mut c_void,
    ) -> *mut kiln_status_t,
>;

/// Runs once when an event is ready; `status` is NULL on success, else borrowed
/// for the call. `None` is NULL.
pub type kiln_event_callback_fn = Option<unsafe extern "C" fn(status: *const kiln_status_t, user_data: *mut c_void)>;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_client_options_t {
    pub struct_size: usize,
    pub backend: *const c_char,
    /// Since 0.2.
    pub num_devices: i32,
}

impl Default for kiln_client_options_t {
    /// `KILN_CLIENT_OPTIONS_INIT`.
    fn default() -> Self {
        Self { struct_size: core::mem::size_of::<Self>(), backend: core::ptr::null(), num_devices: 0 }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_compile_options_t {
    pub struct_size: usize,
    pub optimization_level: i32,
    pub num_threads: i32,
    pub allow_unsafe_nan_math: i32,
}

impl Default for kiln_compile_options_t {
    /// `KILN_COMPILE_OPTIONS_INIT`.
    fn default() -> Self {
        Self {
            struct_size: core::mem::size_of::<Self>(),
            optimization_level: 2,
            num_threads: 0,
            allow_unsafe_nan_math: 0,
        }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_execute_options_t {
    pub struct_size: usize,
    pub rng_seed: u64,
    pub timeout_ns: i64,
    pub cancellation: *mut kiln_cancellation_t,
    /// Since 0.2.
    pub device: *mut kiln_device_t,
    /// Since 0.2.
    pub donated_arguments: *const usize,
    /// Since 0.2.
    pub num_donated_arguments: usize,
}

impl Default for kiln_execute_options_t {
    /// `KILN_EXECUTE_OPTIONS_INIT`.
    fn default() -> Self {
        Self {
            struct_size: core::mem::size_of::<Self>(),
            rng_seed: 0,
            timeout_ns: 0,
            cancellation: core::ptr::null_mut(),
            device: core::ptr::null_mut(),
            donated_arguments: core::ptr::null(),
            num_donated_arguments: 0,
        }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_gather_dimension_numbers_t {
    pub struct_size: usize,
    pub offset_dims: *const i64,
    pub num_offset_dims: usize,
    pub collapsed_slice_dims: *const i64,
    pub num_collapsed_slice_dims: usize,
    pub start_index_map: *const i64,
    pub num_start_index_map: usize,
    pub index_vector_dim: i64,
    pub operand_batching_dims: *const i64,
    pub num_operand_batching_dims: usize,
    pub start_indices_batching_dims: *const i64,
    pub num_start_indices_batching_dims: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_scatter_dimension_numbers_t {
    pub struct_size: usize,
    pub update_window_dims: *const i64,
    pub num_update_window_dims: usize,
    pub inserted_window_dims: *const i64,
    pub num_inserted_window_dims: usize,
    pub scatter_dims_to_operand_dims: *const i64,
    pub num_scatter_dims_to_operand_dims: usize,
    pub index_vector_dim: i64,
    pub input_batching_dims: *const i64,
    pub num_input_batching_dims: usize,
    pub scatter_indices_batching_dims: *const i64,
    pub num_scatter_indices_batching_dims: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_dot_dimension_numbers_t {
    pub struct_size: usize,
    pub lhs_contracting_dimensions: *const i64,
    pub num_lhs_contracting_dimensions: usize,
    pub rhs_contracting_dimensions: *const i64,
    pub num_rhs_contracting_dimensions: usize,
    pub lhs_batch_dimensions: *const i64,
    pub num_lhs_batch_dimensions: usize,
    pub rhs_batch_dimensions: *const i64,
    pub num_rhs_batch_dimensions: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kiln_conv_dimension_numbers_t {
    pub struct_size: usize,
    pub input_batch_dimension: i64,
    pub input_feature_dimension: i64,
    pub input_spatial_dimensions: *const i64,
    pub kernel_input_feature_dimension: i64,
    pub kernel_output_feature_dimension: i64,
    pub kernel_spatial_dimensions: *const i64,
    pub output_batch_dimension: i64,
    pub output_feature_dimension: i64,
    pub output_spatial_dimensions: *const i64,
    pub num_spatial_dimensions: usize,
}

// Functions, in the header's order. `systest` checks every prototype against kiln.h.
extern "C" {
    pub fn kiln_version() -> *const c_char;
    pub fn kiln_version_number() -> u32;
    pub fn kiln_status_code(status: *const kiln_status_t) -> kiln_status_code_t;
    pub fn kiln_status_message(status: *const kiln_status_t) -> *const c_char;
    pub fn kiln_status_code_name(code: kiln_status_code_t) -> *const c_char;
    pub fn kiln_status_destroy(status: *mut kiln_status_t);
    pub fn kiln_string_destroy(string: *mut c_char);
    pub fn kiln_element_type_name(type_: kiln_element_type_t) -> *const c_char;
    pub fn kiln_element_type_byte_width(type_: kiln_element_type_t) -> usize;
    pub fn kiln_backend_count(out_count: *mut usize) -> *mut kiln_status_t;
    pub fn kiln_backend_name(index: usize, out_name: *mut *const c_char) -> *mut kiln_status_t;
    pub fn kiln_client_create(
        options: *const kiln_client_options_t,
        out_client: *mut *mut kiln_client_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_client_destroy(client: *mut kiln_client_t);
    pub fn kiln_client_backend_name(client: *const kiln_client_t, out_name: *mut *const c_char) -> *mut kiln_status_t;
    pub fn kiln_client_device_count(client: *const kiln_client_t, out_count: *mut usize) -> *mut kiln_status_t;
    pub fn kiln_client_device_description(
        client: *const kiln_client_t,
        index: usize,
        out_description: *mut *const c_char,
    ) -> *mut kiln_status_t;
    pub fn kiln_client_device(
        client: *const kiln_client_t,
        index: usize,
        out_device: *mut *mut kiln_device_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_device_index(device: *const kiln_device_t, out_index: *mut usize) -> *mut kiln_status_t;
    pub fn kiln_device_description(
        device: *const kiln_device_t,
        out_description: *mut *const c_char,
    ) -> *mut kiln_status_t;
    pub fn kiln_client_transfer_to_infeed(
        client: *mut kiln_client_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        data: *const c_void,
        byte_size: usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_register_custom_call(name: *const c_char, fn_: kiln_custom_call_fn) -> *mut kiln_status_t;
    pub fn kiln_builder_create(name: *const c_char, out_builder: *mut *mut kiln_builder_t) -> *mut kiln_status_t;
    pub fn kiln_builder_destroy(builder: *mut kiln_builder_t);
    pub fn kiln_builder_first_error(builder: *const kiln_builder_t) -> *mut kiln_status_t;
    pub fn kiln_builder_get_shape(
        builder: *const kiln_builder_t,
        op: kiln_op_t,
        out_type: *mut kiln_element_type_t,
        dims: *mut i64,
        dims_capacity: usize,
        out_rank: *mut usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_builder_build(
        builder: *mut kiln_builder_t,
        root: kiln_op_t,
        out_computation: *mut *mut kiln_computation_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_op_parameter(
        builder: *mut kiln_builder_t,
        number: i64,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        minor_to_major: *const i64,
        name: *const c_char,
    ) -> kiln_op_t;
    pub fn kiln_op_constant(
        builder: *mut kiln_builder_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        data: *const c_void,
        byte_size: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_constant_f32(builder: *mut kiln_builder_t, value: f32) -> kiln_op_t;
    pub fn kiln_op_constant_f64(builder: *mut kiln_builder_t, value: f64) -> kiln_op_t;
    pub fn kiln_op_constant_s32(builder: *mut kiln_builder_t, value: i32) -> kiln_op_t;
    pub fn kiln_op_constant_s64(builder: *mut kiln_builder_t, value: i64) -> kiln_op_t;
    pub fn kiln_op_constant_u32(builder: *mut kiln_builder_t, value: u32) -> kiln_op_t;
    pub fn kiln_op_constant_pred(builder: *mut kiln_builder_t, value: c_int) -> kiln_op_t;
    pub fn kiln_op_iota(
        builder: *mut kiln_builder_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        iota_dimension: i64,
    ) -> kiln_op_t;
    pub fn kiln_op_add(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_sub(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_mul(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_div(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_rem(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_max(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_min(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_pow(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_atan2(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_and(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_or(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_xor(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_shift_left(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_shift_right_arithmetic(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_shift_right_logical(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_complex(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_eq(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_ne(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_ge(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_gt(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_le(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_lt(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_compare(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        direction: kiln_comparison_direction_t,
        type_: kiln_comparison_type_t,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_abs(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_neg(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_not(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_sign(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_floor(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_ceil(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_round(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_round_nearest_even(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_exp(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_expm1(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_log(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_log1p(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_logistic(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_sqrt(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_rsqrt(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_cbrt(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_sin(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_cos(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_tan(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_tanh(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_erf(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_is_finite(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_clz(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_popcnt(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_real(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_imag(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_copy(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_cross_replica_sum(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_optimization_barrier(builder: *mut kiln_builder_t, x: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_select(
        builder: *mut kiln_builder_t,
        pred: kiln_op_t,
        on_true: kiln_op_t,
        on_false: kiln_op_t,
    ) -> kiln_op_t;
    pub fn kiln_op_clamp(builder: *mut kiln_builder_t, min: kiln_op_t, operand: kiln_op_t, max: kiln_op_t)
        -> kiln_op_t;
    pub fn kiln_op_convert(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        new_type: kiln_element_type_t,
    ) -> kiln_op_t;
    pub fn kiln_op_bitcast_convert(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        new_type: kiln_element_type_t,
    ) -> kiln_op_t;
    pub fn kiln_op_reduce_precision(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        exponent_bits: i64,
        mantissa_bits: i64,
    ) -> kiln_op_t;
    pub fn kiln_op_broadcast(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        broadcast_sizes: *const i64,
        num_broadcast_sizes: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_broadcast_in_dim(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        out_dims: *const i64,
        out_rank: usize,
        broadcast_dimensions: *const i64,
        num_broadcast_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_reshape(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        new_sizes: *const i64,
        new_rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_reshape_with_dimensions(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        dimensions: *const i64,
        num_dimensions: usize,
        new_sizes: *const i64,
        new_rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_collapse(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        dimensions: *const i64,
        num_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_transpose(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        permutation: *const i64,
        rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_rev(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        dimensions: *const i64,
        num_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_concat_in_dim(
        builder: *mut kiln_builder_t,
        operands: *const kiln_op_t,
        num_operands: usize,
        dimension: i64,
    ) -> kiln_op_t;
    pub fn kiln_op_pad(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        padding_value: kiln_op_t,
        edge_low: *const i64,
        edge_high: *const i64,
        interior: *const i64,
        rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_slice(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        start_indices: *const i64,
        limit_indices: *const i64,
        strides: *const i64,
        rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_slice_in_dim(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        start_index: i64,
        limit_index: i64,
        stride: i64,
        dimension: i64,
    ) -> kiln_op_t;
    pub fn kiln_op_dynamic_slice(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        start_indices: kiln_op_t,
        slice_sizes: *const i64,
        num_slice_sizes: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_dynamic_slice_scalars(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        start_indices: *const kiln_op_t,
        num_start_indices: usize,
        slice_sizes: *const i64,
        num_slice_sizes: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_dynamic_update_slice(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        update: kiln_op_t,
        start_indices: kiln_op_t,
    ) -> kiln_op_t;
    pub fn kiln_op_dynamic_update_slice_scalars(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        update: kiln_op_t,
        start_indices: *const kiln_op_t,
        num_start_indices: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_get_dimension_size(builder: *mut kiln_builder_t, operand: kiln_op_t, dimension: i64) -> kiln_op_t;
    pub fn kiln_op_gather(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        start_indices: kiln_op_t,
        dimension_numbers: *const kiln_gather_dimension_numbers_t,
        slice_sizes: *const i64,
        num_slice_sizes: usize,
        indices_are_sorted: c_int,
    ) -> kiln_op_t;
    pub fn kiln_op_scatter(
        builder: *mut kiln_builder_t,
        operands: *const kiln_op_t,
        num_operands: usize,
        scatter_indices: kiln_op_t,
        updates: *const kiln_op_t,
        num_updates: usize,
        update_computation: *const kiln_computation_t,
        dimension_numbers: *const kiln_scatter_dimension_numbers_t,
        indices_are_sorted: c_int,
        unique_indices: c_int,
    ) -> kiln_op_t;
    pub fn kiln_op_tuple(builder: *mut kiln_builder_t, elements: *const kiln_op_t, num_elements: usize) -> kiln_op_t;
    pub fn kiln_op_get_tuple_element(builder: *mut kiln_builder_t, tuple: kiln_op_t, index: i64) -> kiln_op_t;
    pub fn kiln_op_dot(builder: *mut kiln_builder_t, lhs: kiln_op_t, rhs: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_dot_general(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        dimension_numbers: *const kiln_dot_dimension_numbers_t,
    ) -> kiln_op_t;
    pub fn kiln_op_set_precision(
        builder: *mut kiln_builder_t,
        op: kiln_op_t,
        lhs_precision: kiln_precision_t,
        rhs_precision: kiln_precision_t,
    ) -> kiln_op_t;
    pub fn kiln_op_conv(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        window_strides: *const i64,
        num_spatial: usize,
        padding: kiln_padding_t,
    ) -> kiln_op_t;
    pub fn kiln_op_conv_with_general_padding(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        window_strides: *const i64,
        padding_low: *const i64,
        padding_high: *const i64,
        num_spatial: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_conv_with_general_dimensions(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        window_strides: *const i64,
        num_spatial: usize,
        padding: kiln_padding_t,
        dimension_numbers: *const kiln_conv_dimension_numbers_t,
    ) -> kiln_op_t;
    pub fn kiln_op_conv_general(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        window_strides: *const i64,
        padding_low: *const i64,
        padding_high: *const i64,
        num_spatial: usize,
        dimension_numbers: *const kiln_conv_dimension_numbers_t,
    ) -> kiln_op_t;
    pub fn kiln_op_conv_general_dilated(
        builder: *mut kiln_builder_t,
        lhs: kiln_op_t,
        rhs: kiln_op_t,
        window_strides: *const i64,
        padding_low: *const i64,
        padding_high: *const i64,
        lhs_dilation: *const i64,
        rhs_dilation: *const i64,
        num_spatial: usize,
        dimension_numbers: *const kiln_conv_dimension_numbers_t,
        feature_group_count: i64,
        batch_group_count: i64,
    ) -> kiln_op_t;
    pub fn kiln_op_fft(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        fft_type: kiln_fft_type_t,
        fft_length: *const i64,
        num_fft_length: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_reduce(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        init_value: kiln_op_t,
        computation: *const kiln_computation_t,
        dimensions: *const i64,
        num_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_reduce_variadic(
        builder: *mut kiln_builder_t,
        operands: *const kiln_op_t,
        init_values: *const kiln_op_t,
        num_operands: usize,
        computation: *const kiln_computation_t,
        dimensions: *const i64,
        num_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_reduce_window(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        init_value: kiln_op_t,
        computation: *const kiln_computation_t,
        window_dimensions: *const i64,
        window_strides: *const i64,
        rank: usize,
        padding: kiln_padding_t,
    ) -> kiln_op_t;
    pub fn kiln_op_reduce_window_general(
        builder: *mut kiln_builder_t,
        operands: *const kiln_op_t,
        init_values: *const kiln_op_t,
        num_operands: usize,
        computation: *const kiln_computation_t,
        window_dimensions: *const i64,
        window_strides: *const i64,
        base_dilations: *const i64,
        window_dilations: *const i64,
        padding_low: *const i64,
        padding_high: *const i64,
        rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_select_and_scatter(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        select: *const kiln_computation_t,
        window_dimensions: *const i64,
        window_strides: *const i64,
        rank: usize,
        padding: kiln_padding_t,
        source: kiln_op_t,
        init_value: kiln_op_t,
        scatter: *const kiln_computation_t,
    ) -> kiln_op_t;
    pub fn kiln_op_select_and_scatter_general(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        select: *const kiln_computation_t,
        window_dimensions: *const i64,
        window_strides: *const i64,
        padding_low: *const i64,
        padding_high: *const i64,
        rank: usize,
        source: kiln_op_t,
        init_value: kiln_op_t,
        scatter: *const kiln_computation_t,
    ) -> kiln_op_t;
    pub fn kiln_op_map(
        builder: *mut kiln_builder_t,
        operands: *const kiln_op_t,
        num_operands: usize,
        computation: *const kiln_computation_t,
        dimensions: *const i64,
        num_dimensions: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_sort(builder: *mut kiln_builder_t, operand: kiln_op_t) -> kiln_op_t;
    pub fn kiln_op_sort_variadic(
        builder: *mut kiln_builder_t,
        operands: *const kiln_op_t,
        num_operands: usize,
        comparator: *const kiln_computation_t,
        dimension: i64,
        is_stable: c_int,
    ) -> kiln_op_t;
    pub fn kiln_op_all_reduce(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        computation: *const kiln_computation_t,
    ) -> kiln_op_t;
    pub fn kiln_op_batch_norm_training(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        scale: kiln_op_t,
        offset: kiln_op_t,
        epsilon: f32,
        feature_index: i64,
    ) -> kiln_op_t;
    pub fn kiln_op_batch_norm_inference(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        scale: kiln_op_t,
        offset: kiln_op_t,
        mean: kiln_op_t,
        variance: kiln_op_t,
        epsilon: f32,
        feature_index: i64,
    ) -> kiln_op_t;
    pub fn kiln_op_batch_norm_grad(
        builder: *mut kiln_builder_t,
        operand: kiln_op_t,
        scale: kiln_op_t,
        mean: kiln_op_t,
        variance: kiln_op_t,
        grad_output: kiln_op_t,
        epsilon: f32,
        feature_index: i64,
    ) -> kiln_op_t;
    pub fn kiln_op_call(
        builder: *mut kiln_builder_t,
        computation: *const kiln_computation_t,
        operands: *const kiln_op_t,
        num_operands: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_while(
        builder: *mut kiln_builder_t,
        condition: *const kiln_computation_t,
        body: *const kiln_computation_t,
        init: kiln_op_t,
    ) -> kiln_op_t;
    pub fn kiln_op_conditional(
        builder: *mut kiln_builder_t,
        predicate: kiln_op_t,
        true_operand: kiln_op_t,
        true_computation: *const kiln_computation_t,
        false_operand: kiln_op_t,
        false_computation: *const kiln_computation_t,
    ) -> kiln_op_t;
    pub fn kiln_op_conditional_indexed(
        builder: *mut kiln_builder_t,
        branch_index: kiln_op_t,
        branch_computations: *const *const kiln_computation_t,
        branch_operands: *const kiln_op_t,
        num_branches: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_rng_uniform(
        builder: *mut kiln_builder_t,
        a: kiln_op_t,
        b: kiln_op_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_rng_normal(
        builder: *mut kiln_builder_t,
        mu: kiln_op_t,
        sigma: kiln_op_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_rng_bernoulli(
        builder: *mut kiln_builder_t,
        p: kiln_op_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_rng_bit_generator(
        builder: *mut kiln_builder_t,
        algorithm: kiln_rng_algorithm_t,
        initial_state: kiln_op_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
    ) -> kiln_op_t;
    pub fn kiln_op_infeed(
        builder: *mut kiln_builder_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        config: *const c_char,
    ) -> kiln_op_t;
    pub fn kiln_op_outfeed(builder: *mut kiln_builder_t, operand: kiln_op_t, config: *const c_char) -> kiln_op_t;
    pub fn kiln_op_custom_call(
        builder: *mut kiln_builder_t,
        target: *const c_char,
        operands: *const kiln_op_t,
        num_operands: usize,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        opaque: *const c_char,
        has_side_effect: c_int,
    ) -> kiln_op_t;
    pub fn kiln_op_after_all(builder: *mut kiln_builder_t, tokens: *const kiln_op_t, num_tokens: usize) -> kiln_op_t;
    pub fn kiln_op_create_token(builder: *mut kiln_builder_t) -> kiln_op_t;
    pub fn kiln_computation_from_hlo_text(
        text: *const c_char,
        text_size: usize,
        out_computation: *mut *mut kiln_computation_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_computation_to_hlo_text(
        computation: *const kiln_computation_t,
        out_text: *mut *mut c_char,
    ) -> *mut kiln_status_t;
    pub fn kiln_computation_parameter_count(
        computation: *const kiln_computation_t,
        out_count: *mut usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_computation_destroy(computation: *mut kiln_computation_t);
    pub fn kiln_computation_vjp(
        computation: *const kiln_computation_t,
        wrt: *const i64,
        num_wrt: usize,
        out_computation: *mut *mut kiln_computation_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_computation_value_and_grad(
        computation: *const kiln_computation_t,
        wrt: *const i64,
        num_wrt: usize,
        out_computation: *mut *mut kiln_computation_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_computation_jvp(
        computation: *const kiln_computation_t,
        wrt: *const i64,
        num_wrt: usize,
        out_computation: *mut *mut kiln_computation_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_client_buffer_from_host(
        client: *mut kiln_client_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        minor_to_major: *const i64,
        data: *const c_void,
        byte_size: usize,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_device_buffer_from_host(
        device: *mut kiln_device_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        minor_to_major: *const i64,
        data: *const c_void,
        byte_size: usize,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_device_buffer_alias_host(
        device: *mut kiln_device_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        data: *const c_void,
        byte_size: usize,
        release: kiln_host_release_fn,
        user_data: *mut c_void,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_is_host_alias(buffer: *const kiln_buffer_t, out_is_alias: *mut c_int) -> *mut kiln_status_t;
    pub fn kiln_device_buffer_alias_cuda_memory(
        device: *mut kiln_device_t,
        type_: kiln_element_type_t,
        dims: *const i64,
        rank: usize,
        device_address: u64,
        release: kiln_host_release_fn,
        user_data: *mut c_void,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_cuda_memory(
        buffer: *const kiln_buffer_t,
        out_ordinal: *mut c_int,
        out_device_address: *mut u64,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_destroy(buffer: *mut kiln_buffer_t);
    pub fn kiln_buffer_device(buffer: *const kiln_buffer_t, out_device: *mut *mut kiln_device_t) -> *mut kiln_status_t;
    pub fn kiln_buffer_copy_to_device(
        buffer: *mut kiln_buffer_t,
        device: *mut kiln_device_t,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_element_type(
        buffer: *const kiln_buffer_t,
        out_type: *mut kiln_element_type_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_rank(buffer: *const kiln_buffer_t, out_rank: *mut usize) -> *mut kiln_status_t;
    pub fn kiln_buffer_dimensions(
        buffer: *const kiln_buffer_t,
        dims: *mut i64,
        dims_capacity: usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_minor_to_major(
        buffer: *const kiln_buffer_t,
        minor_to_major: *mut i64,
        capacity: usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_byte_size(buffer: *const kiln_buffer_t, out_byte_size: *mut usize) -> *mut kiln_status_t;
    pub fn kiln_buffer_to_host(
        buffer: *const kiln_buffer_t,
        dst: *mut c_void,
        dst_byte_size: usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_client_buffer_from_npy_file(
        client: *mut kiln_client_t,
        path: *const c_char,
        expected_type: kiln_element_type_t,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_to_npy_file(buffer: *const kiln_buffer_t, path: *const c_char) -> *mut kiln_status_t;
    pub fn kiln_safetensors_open(path: *const c_char, out_file: *mut *mut kiln_safetensors_t) -> *mut kiln_status_t;
    pub fn kiln_safetensors_destroy(file: *mut kiln_safetensors_t);
    pub fn kiln_safetensors_tensor_count(file: *const kiln_safetensors_t, out_count: *mut usize) -> *mut kiln_status_t;
    pub fn kiln_safetensors_tensor_name(
        file: *const kiln_safetensors_t,
        index: usize,
        out_name: *mut *const c_char,
    ) -> *mut kiln_status_t;
    pub fn kiln_safetensors_metadata(
        file: *const kiln_safetensors_t,
        key: *const c_char,
        out_value: *mut *const c_char,
    ) -> *mut kiln_status_t;
    pub fn kiln_safetensors_read(
        file: *mut kiln_safetensors_t,
        device: *mut kiln_device_t,
        name: *const c_char,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_safetensors_write_file(
        path: *const c_char,
        names: *const *const c_char,
        buffers: *const *mut kiln_buffer_t,
        num_buffers: usize,
        metadata_keys: *const *const c_char,
        metadata_values: *const *const c_char,
        num_metadata: usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_to_dlpack_versioned(
        buffer: *mut kiln_buffer_t,
        out_tensor: *mut *mut DLManagedTensorVersioned,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_to_dlpack(
        buffer: *mut kiln_buffer_t,
        out_tensor: *mut *mut DLManagedTensor,
    ) -> *mut kiln_status_t;
    pub fn kiln_device_buffer_from_dlpack_versioned(
        device: *mut kiln_device_t,
        tensor: *mut DLManagedTensorVersioned,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_device_buffer_from_dlpack(
        device: *mut kiln_device_t,
        tensor: *mut DLManagedTensor,
        out_buffer: *mut *mut kiln_buffer_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_buffer_ready_event(
        buffer: *const kiln_buffer_t,
        out_event: *mut *mut kiln_event_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_event_await(event: *const kiln_event_t) -> *mut kiln_status_t;
    pub fn kiln_event_is_ready(event: *const kiln_event_t, out_ready: *mut c_int) -> *mut kiln_status_t;
    pub fn kiln_event_on_ready(
        event: *const kiln_event_t,
        callback: kiln_event_callback_fn,
        user_data: *mut c_void,
    ) -> *mut kiln_status_t;
    pub fn kiln_event_destroy(event: *mut kiln_event_t);
    pub fn kiln_client_compile(
        client: *mut kiln_client_t,
        computation: *const kiln_computation_t,
        options: *const kiln_compile_options_t,
        out_executable: *mut *mut kiln_executable_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_executable_destroy(executable: *mut kiln_executable_t);
    pub fn kiln_executable_parameter_count(
        executable: *const kiln_executable_t,
        out_count: *mut usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_executable_result_count(
        executable: *const kiln_executable_t,
        out_count: *mut usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_executable_parameter_type(
        executable: *const kiln_executable_t,
        index: usize,
        out_type: *mut kiln_element_type_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_cancellation_create(out_cancellation: *mut *mut kiln_cancellation_t) -> *mut kiln_status_t;
    pub fn kiln_cancellation_cancel(cancellation: *mut kiln_cancellation_t);
    pub fn kiln_cancellation_is_cancelled(
        cancellation: *const kiln_cancellation_t,
        out_cancelled: *mut c_int,
    ) -> *mut kiln_status_t;
    pub fn kiln_cancellation_destroy(cancellation: *mut kiln_cancellation_t);
    pub fn kiln_executable_execute(
        executable: *mut kiln_executable_t,
        arguments: *const *mut kiln_buffer_t,
        num_arguments: usize,
        options: *const kiln_execute_options_t,
        results: *mut *mut kiln_buffer_t,
        results_capacity: usize,
        out_num_results: *mut usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_executable_execute_async(
        executable: *mut kiln_executable_t,
        arguments: *const *mut kiln_buffer_t,
        num_arguments: usize,
        options: *const kiln_execute_options_t,
        results: *mut *mut kiln_buffer_t,
        results_capacity: usize,
        out_num_results: *mut usize,
        out_event: *mut *mut kiln_event_t,
    ) -> *mut kiln_status_t;
    pub fn kiln_status_create(code: kiln_status_code_t, message: *const c_char) -> *mut kiln_status_t;
    pub fn kiln_user_op_def_create(name: *const c_char, out_def: *mut *mut kiln_user_op_def_t) -> *mut kiln_status_t;
    pub fn kiln_user_op_def_destroy(def: *mut kiln_user_op_def_t);
    pub fn kiln_user_op_def_add_attr(def: *mut kiln_user_op_def_t, spec: *const c_char) -> *mut kiln_status_t;
    pub fn kiln_user_op_def_add_input(def: *mut kiln_user_op_def_t, spec: *const c_char) -> *mut kiln_status_t;
    pub fn kiln_user_op_def_add_output(def: *mut kiln_user_op_def_t, spec: *const c_char) -> *mut kiln_status_t;
    pub fn kiln_user_op_def_set_doc(def: *mut kiln_user_op_def_t, doc: *const c_char) -> *mut kiln_status_t;
    pub fn kiln_user_op_def_set_shape_fn(def: *mut kiln_user_op_def_t, fn_: kiln_op_shape_fn) -> *mut kiln_status_t;
    pub fn kiln_user_op_def_set_grad_fn(def: *mut kiln_user_op_def_t, fn_: kiln_op_grad_fn) -> *mut kiln_status_t;
    pub fn kiln_user_op_def_set_user_data(
        def: *mut kiln_user_op_def_t,
        user_data: *mut c_void,
        release: kiln_host_release_fn,
    ) -> *mut kiln_status_t;
    pub fn kiln_user_op_register(def: *const kiln_user_op_def_t) -> *mut kiln_status_t;
    pub fn kiln_user_op_register_kernel(
        op: *const c_char,
        backend: *const c_char,
        type_: kiln_element_type_t,
        fn_: kiln_op_kernel_fn,
        user_data: *mut c_void,
        release: kiln_host_release_fn,
    ) -> *mut kiln_status_t;
    pub fn kiln_user_op_register_device_kernel(
        op: *const c_char,
        backend: *const c_char,
        type_: kiln_element_type_t,
        code: *const c_void,
        code_size: usize,
        entry: *const c_char,
    ) -> *mut kiln_status_t;
    pub fn kiln_user_op_register_device_kernel_with_launch(
        op: *const c_char,
        backend: *const c_char,
        type_: kiln_element_type_t,
        code: *const c_void,
        code_size: usize,
        entry: *const c_char,
        block_size: u32,
        grid_size: u32,
    ) -> *mut kiln_status_t;
    pub fn kiln_op_call_registered(
        builder: *mut kiln_builder_t,
        name: *const c_char,
        operands: *const kiln_op_t,
        num_operands: usize,
        attrs: *const c_char,
    ) -> kiln_op_t;
    pub fn kiln_user_op_frame_set_result_dims(
        frame: *mut kiln_op_call_frame_t,
        index: usize,
        dims: *const i64,
        rank: usize,
    ) -> *mut kiln_status_t;
    pub fn kiln_user_op_registry_describe(out_text: *mut *mut c_char) -> *mut kiln_status_t;
}
