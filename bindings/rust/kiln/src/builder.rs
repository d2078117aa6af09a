//! Building computations op by op, and computations themselves.

use std::cell::Cell;
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use kiln_sys as sys;

use crate::client::opt_ptr;
use crate::error::{c_string, check, Code, Error, Result};
use crate::types::{Element, ElementType, Shape};

/// A built or parsed computation: a module with an entry. Immutable and
/// independent of any client; thread-safe (`Send + Sync`).
#[derive(Debug)]
pub struct Computation {
    raw: NonNull<sys::kiln_computation_t>,
}

// SAFETY: kiln.h: a computation is immutable and thread-safe.
unsafe impl Send for Computation {}
unsafe impl Sync for Computation {}

impl Computation {
    /// Parses and verifies XLA HLO text. Errors are [`Code::InvalidArgument`]
    /// naming line and column.
    pub fn from_hlo_text(text: &str) -> Result<Computation> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_computation_from_hlo_text(text.as_ptr().cast(), text.len(), &mut raw) })?;
        Ok(Computation { raw: NonNull::new(raw).expect("NULL computation") })
    }

    /// Reads and parses an HLO text file.
    pub fn from_hlo_file(path: impl AsRef<std::path::Path>) -> Result<Computation> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::new(Code::NotFound, format!("cannot read {}: {e}", path.display())))?;
        Self::from_hlo_text(&text)
    }

    /// Prints the computation as HLO text.
    pub fn to_hlo_text(&self) -> Result<String> {
        let mut text = ptr::null_mut();
        check(unsafe { sys::kiln_computation_to_hlo_text(self.raw.as_ptr(), &mut text) })?;
        // SAFETY: an owned NUL-terminated string, freed with kiln_string_destroy.
        unsafe {
            let s = std::ffi::CStr::from_ptr(text).to_string_lossy().into_owned();
            sys::kiln_string_destroy(text);
            Ok(s)
        }
    }

    /// Number of parameters of the entry computation.
    pub fn parameter_count(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::kiln_computation_parameter_count(self.raw.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// Reverse-mode derivative (vector-Jacobian product) as a new computation
    /// (`kiln_computation_vjp`). It takes this computation's parameters, then,
    /// unless the result is one float scalar (whose cotangent is 1), one
    /// cotangent per result leaf; it returns the result leaves followed by the
    /// gradient for each parameter number of `wrt`, in that order. A bad or
    /// repeated number, an integer parameter or an op without a derivative is
    /// [`Code::InvalidArgument`] or [`Code::Unimplemented`] naming it.
    pub fn grad(&self, wrt: &[i64]) -> Result<Computation> {
        self.gradient(sys::kiln_computation_vjp, wrt)
    }

    /// For a scalar loss: a computation with the same parameters returning
    /// `(loss, gradient for wrt[0], ...)` (`kiln_computation_value_and_grad`).
    pub fn value_and_grad(&self, wrt: &[i64]) -> Result<Computation> {
        self.gradient(sys::kiln_computation_value_and_grad, wrt)
    }

    /// Forward-mode derivative (Jacobian-vector product) as a new computation
    /// (`kiln_computation_jvp`). It takes this computation's parameters, then
    /// one tangent per parameter number of `wrt` (in that order, each of its
    /// parameter's shape); it returns the result leaves followed by the
    /// tangent of each result leaf (zeros for integer leaves). A bad or
    /// repeated number, an integer parameter or an op without a derivative is
    /// [`Code::InvalidArgument`] or [`Code::Unimplemented`] naming it.
    pub fn jvp(&self, wrt: &[i64]) -> Result<Computation> {
        self.gradient(sys::kiln_computation_jvp, wrt)
    }

    fn gradient(
        &self,
        call: unsafe extern "C" fn(
            *const sys::kiln_computation_t,
            *const i64,
            usize,
            *mut *mut sys::kiln_computation_t,
        ) -> *mut sys::kiln_status_t,
        wrt: &[i64],
    ) -> Result<Computation> {
        let mut raw = ptr::null_mut();
        check(unsafe { call(self.raw.as_ptr(), wrt.as_ptr(), wrt.len(), &mut raw) })?;
        Ok(Computation { raw: NonNull::new(raw).expect("NULL computation") })
    }

    /// The raw handle, for use with `kiln-sys`. Owned by `self`.
    pub fn as_raw(&self) -> *mut sys::kiln_computation_t {
        self.raw.as_ptr()
    }
}

impl Drop for Computation {
    fn drop(&mut self) {
        unsafe { sys::kiln_computation_destroy(self.raw.as_ptr()) }
    }
}

/// Builds one computation. Ops are cheap [`Op`] handles borrowed from the
/// builder. The first failing op makes the builder's error sticky: later ops
/// are invalid, and [`Builder::build`] (or [`Builder::first_error`]) returns it.
///
/// A builder may move between threads (`Send`) but not be shared (`!Sync`).
#[derive(Debug)]
pub struct Builder {
    raw: NonNull<sys::kiln_builder_t>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: kiln.h: "use one builder from one thread at a time"; `!Sync` keeps it so.
unsafe impl Send for Builder {}

/// An op of one [`Builder`]: a copyable handle that cannot outlive it. Using an
/// op with another builder is that builder's error ([`Code::InvalidArgument`]).
/// `+`, `-`, `*`, `/` and unary `-` build the elementwise ops.
#[derive(Debug, Clone, Copy)]
pub struct Op<'b> {
    builder: &'b Builder,
    id: sys::kiln_op_t,
}

impl<'b> Op<'b> {
    /// The raw `kiln_op_t` (`KILN_OP_INVALID` after an error).
    pub fn id(self) -> sys::kiln_op_t {
        self.id
    }

    /// The builder this op belongs to.
    pub fn builder(self) -> &'b Builder {
        self.builder
    }

    /// The op's shape (a tuple reports [`ElementType::Tuple`] and no dims).
    pub fn shape(self) -> Result<Shape> {
        self.builder.shape(self)
    }
}

macro_rules! op_operators {
    ($($tr:ident, $m:ident, $f:ident);*) => {$(
        impl<'b> std::ops::$tr for Op<'b> {
            type Output = Op<'b>;
            fn $m(self, rhs: Op<'b>) -> Op<'b> {
                self.builder.$f(self, rhs)
            }
        }
    )*};
}
op_operators!(Add, add, add; Sub, sub, sub; Mul, mul, mul; Div, div, div);

impl<'b> std::ops::Neg for Op<'b> {
    type Output = Op<'b>;
    fn neg(self) -> Op<'b> {
        self.builder.neg(self)
    }
}

/// Direction of [`Builder::compare`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ComparisonDirection {
    Eq = sys::KILN_COMPARE_EQ,
    Ne = sys::KILN_COMPARE_NE,
    Ge = sys::KILN_COMPARE_GE,
    Gt = sys::KILN_COMPARE_GT,
    Le = sys::KILN_COMPARE_LE,
    Lt = sys::KILN_COMPARE_LT,
}

/// Comparison type of [`Builder::compare`]; `Default` picks by element type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ComparisonType {
    #[default]
    Default = sys::KILN_COMPARISON_TYPE_DEFAULT,
    Float = sys::KILN_COMPARISON_TYPE_FLOAT,
    TotalOrder = sys::KILN_COMPARISON_TYPE_TOTAL_ORDER,
    Signed = sys::KILN_COMPARISON_TYPE_SIGNED,
    Unsigned = sys::KILN_COMPARISON_TYPE_UNSIGNED,
}

/// Operand precision of a dot or convolution (XLA's precision config):
/// `Default` lets the backend use faster algorithms (Winograd convolutions on
/// the CPU); `High` and `Highest` keep the plain sum of products.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Precision {
    #[default]
    Default = sys::KILN_PRECISION_DEFAULT,
    High = sys::KILN_PRECISION_HIGH,
    Highest = sys::KILN_PRECISION_HIGHEST,
}

/// Padding scheme of convolutions and windowed ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Padding {
    Valid = sys::KILN_PADDING_VALID,
    Same = sys::KILN_PADDING_SAME,
}

/// Algorithm of [`Builder::rng_bit_generator`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum RngAlgorithm {
    #[default]
    Default = sys::KILN_RNG_DEFAULT,
    ThreeFry = sys::KILN_RNG_THREE_FRY,
    Philox = sys::KILN_RNG_PHILOX,
}

/// The transform of [`Builder::fft`] (XLA's `FftType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum FftType {
    /// Complex to complex, forward.
    Fft = sys::KILN_FFT_FFT,
    /// Complex to complex, inverse, scaled by 1/N.
    Ifft = sys::KILN_FFT_IFFT,
    /// Real to the `fft_length[last]/2+1` lowest frequencies of the last dimension.
    Rfft = sys::KILN_FFT_RFFT,
    /// Those frequencies back to real numbers, scaled by 1/N.
    Irfft = sys::KILN_FFT_IRFFT,
}

/// XLA `DotDimensionNumbers`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DotDimensionNumbers<'a> {
    pub lhs_contracting_dimensions: &'a [i64],
    pub rhs_contracting_dimensions: &'a [i64],
    pub lhs_batch_dimensions: &'a [i64],
    pub rhs_batch_dimensions: &'a [i64],
}

/// XLA `GatherDimensionNumbers`.
#[derive(Debug, Clone, Copy, Default)]
pub struct GatherDimensionNumbers<'a> {
    pub offset_dims: &'a [i64],
    pub collapsed_slice_dims: &'a [i64],
    pub start_index_map: &'a [i64],
    pub index_vector_dim: i64,
    pub operand_batching_dims: &'a [i64],
    pub start_indices_batching_dims: &'a [i64],
}

/// XLA `ScatterDimensionNumbers`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScatterDimensionNumbers<'a> {
    pub update_window_dims: &'a [i64],
    pub inserted_window_dims: &'a [i64],
    pub scatter_dims_to_operand_dims: &'a [i64],
    pub index_vector_dim: i64,
    pub input_batching_dims: &'a [i64],
    pub scatter_indices_batching_dims: &'a [i64],
}

/// XLA `ConvolutionDimensionNumbers`; the three spatial lists have equal length.
#[derive(Debug, Clone, Copy)]
pub struct ConvDimensionNumbers<'a> {
    pub input_batch_dimension: i64,
    pub input_feature_dimension: i64,
    pub input_spatial_dimensions: &'a [i64],
    pub kernel_input_feature_dimension: i64,
    pub kernel_output_feature_dimension: i64,
    pub kernel_spatial_dimensions: &'a [i64],
    pub output_batch_dimension: i64,
    pub output_feature_dimension: i64,
    pub output_spatial_dimensions: &'a [i64],
}

impl ConvDimensionNumbers<'_> {
    /// NCHW input, OIHW kernel, NCHW output with the given spatial dimensions
    /// (e.g. `&[2, 3]` for 2-D).
    pub fn nchw(spatial: &[i64]) -> ConvDimensionNumbers<'_> {
        ConvDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 1,
            input_spatial_dimensions: spatial,
            kernel_input_feature_dimension: 1,
            kernel_output_feature_dimension: 0,
            kernel_spatial_dimensions: spatial,
            output_batch_dimension: 0,
            output_feature_dimension: 1,
            output_spatial_dimensions: spatial,
        }
    }

    fn to_raw(self) -> sys::kiln_conv_dimension_numbers_t {
        let n = self.input_spatial_dimensions.len();
        same_len(
            "ConvDimensionNumbers spatial lists",
            n,
            &[self.kernel_spatial_dimensions.len(), self.output_spatial_dimensions.len()],
        );
        sys::kiln_conv_dimension_numbers_t {
            struct_size: std::mem::size_of::<sys::kiln_conv_dimension_numbers_t>(),
            input_batch_dimension: self.input_batch_dimension,
            input_feature_dimension: self.input_feature_dimension,
            input_spatial_dimensions: opt_ptr(self.input_spatial_dimensions),
            kernel_input_feature_dimension: self.kernel_input_feature_dimension,
            kernel_output_feature_dimension: self.kernel_output_feature_dimension,
            kernel_spatial_dimensions: opt_ptr(self.kernel_spatial_dimensions),
            output_batch_dimension: self.output_batch_dimension,
            output_feature_dimension: self.output_feature_dimension,
            output_spatial_dimensions: opt_ptr(self.output_spatial_dimensions),
            num_spatial_dimensions: n,
        }
    }
}

fn opt_slice(s: Option<&[i64]>) -> *const i64 {
    s.map_or(ptr::null(), opt_ptr)
}

macro_rules! binary_ops {
    ($($name:ident, $bcast:ident => $f:ident);* $(;)?) => {$(
        #[doc = concat!("Elementwise `", stringify!($name), "` of equal shapes (or with a scalar).")]
        pub fn $name(&self, lhs: Op<'_>, rhs: Op<'_>) -> Op<'_> {
            self.$bcast(lhs, rhs, &[])
        }
        #[doc = concat!("Elementwise `", stringify!($name), "`; `broadcast_dimensions` maps the lower-rank operand's dimensions into the other's.")]
        pub fn $bcast(&self, lhs: Op<'_>, rhs: Op<'_>, broadcast_dimensions: &[i64]) -> Op<'_> {
            let (l, r) = (self.id(lhs), self.id(rhs));
            self.op(unsafe { sys::$f(self.raw(), l, r, opt_ptr(broadcast_dimensions), broadcast_dimensions.len()) })
        }
    )*};
}

macro_rules! unary_ops {
    ($($name:ident => $f:ident),* $(,)?) => {$(
        #[doc = concat!("Elementwise `", stringify!($name), "`.")]
        pub fn $name(&self, x: Op<'_>) -> Op<'_> {
            let x = self.id(x);
            self.op(unsafe { sys::$f(self.raw(), x) })
        }
    )*};
}

impl Builder {
    /// A builder for a computation named `name`.
    pub fn new(name: &str) -> Result<Builder> {
        let name = c_string("builder name", name)?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_builder_create(name.as_ptr(), &mut raw) })?;
        Ok(Builder { raw: NonNull::new(raw).expect("NULL builder"), _not_sync: PhantomData })
    }

    /// The raw handle, for use with `kiln-sys`. Owned by `self`.
    pub fn as_raw(&self) -> *mut sys::kiln_builder_t {
        self.raw.as_ptr()
    }

    fn raw(&self) -> *mut sys::kiln_builder_t {
        self.raw.as_ptr()
    }

    /// A builder the library owns (a gradient function's), never destroyed
    /// here: the caller keeps it in `ManuallyDrop` and uses it for one call.
    pub(crate) unsafe fn borrowed(raw: *mut sys::kiln_builder_t) -> std::mem::ManuallyDrop<Builder> {
        std::mem::ManuallyDrop::new(Builder { raw: NonNull::new(raw).expect("NULL builder"), _not_sync: PhantomData })
    }

    pub(crate) fn op(&self, id: sys::kiln_op_t) -> Op<'_> {
        Op { builder: self, id }
    }

    /// The raw id of `op`. An op of another builder is passed on as well: the
    /// library refuses it like any bad operand (the builder's error becomes
    /// [`Code::InvalidArgument`] naming the op and both builders).
    fn id(&self, op: Op<'_>) -> sys::kiln_op_t {
        op.id
    }

    fn ids(&self, ops: &[Op<'_>]) -> Vec<sys::kiln_op_t> {
        ops.iter().map(|&o| self.id(o)).collect()
    }

    /// The first error of any op so far, if one failed.
    pub fn first_error(&self) -> Result<()> {
        check(unsafe { sys::kiln_builder_first_error(self.raw()) })
    }

    /// The shape of `op`.
    pub fn shape(&self, op: Op<'_>) -> Result<Shape> {
        let id = self.id(op);
        let (mut t, mut rank) = (sys::KILN_TYPE_INVALID, 0usize);
        check(unsafe { sys::kiln_builder_get_shape(self.raw(), id, &mut t, ptr::null_mut(), 0, &mut rank) })?;
        let mut dims = vec![0i64; rank];
        check(unsafe { sys::kiln_builder_get_shape(self.raw(), id, &mut t, dims.as_mut_ptr(), rank, &mut rank) })?;
        let element_type =
            ElementType::from_raw(t).ok_or_else(|| Error::new(Code::Internal, format!("unknown element type {t}")))?;
        Ok(Shape { element_type, dims })
    }

    /// Builds and verifies the computation rooted at `root`; returns the first
    /// error of any op. The builder stays usable.
    pub fn build(&self, root: Op<'_>) -> Result<Computation> {
        let root = self.id(root);
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_builder_build(self.raw(), root, &mut raw) })?;
        Ok(Computation { raw: NonNull::new(raw).expect("NULL computation") })
    }

    // --- Leaves

    /// Parameter `number` of the given shape (default row-major layout).
    ///
    /// # Panics
    /// If `name` contains a NUL byte.
    pub fn parameter(&self, number: i64, element_type: ElementType, dims: &[i64], name: &str) -> Op<'_> {
        self.parameter_with_layout(number, element_type, dims, None, name)
    }

    /// Parameter `number` with an explicit layout (`minor_to_major`, one entry per
    /// dimension).
    ///
    /// # Panics
    /// If `name` contains a NUL byte.
    pub fn parameter_with_layout(
        &self,
        number: i64,
        element_type: ElementType,
        dims: &[i64],
        minor_to_major: Option<&[i64]>,
        name: &str,
    ) -> Op<'_> {
        let name = cstr_arg("parameter name", name);
        self.op(unsafe {
            sys::kiln_op_parameter(
                self.raw(),
                number,
                element_type.raw(),
                opt_ptr(dims),
                dims.len(),
                opt_slice(minor_to_major),
                name.as_ptr(),
            )
        })
    }

    /// A constant array copied from `data` (row-major, shape `dims`).
    pub fn constant<T: Element>(&self, data: &[T], dims: &[i64]) -> Op<'_> {
        // SAFETY: Element types are plain data.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
        self.constant_bytes(T::TYPE, dims, bytes)
    }

    /// A scalar constant.
    pub fn constant_scalar<T: Element>(&self, value: T) -> Op<'_> {
        self.constant(&[value], &[])
    }

    /// A constant of any array element type from raw row-major bytes.
    pub fn constant_bytes(&self, element_type: ElementType, dims: &[i64], bytes: &[u8]) -> Op<'_> {
        self.op(unsafe {
            sys::kiln_op_constant(
                self.raw(),
                element_type.raw(),
                opt_ptr(dims),
                dims.len(),
                bytes.as_ptr().cast::<c_void>(),
                bytes.len(),
            )
        })
    }

    /// An array counting 0, 1, ... along `iota_dimension`.
    pub fn iota(&self, element_type: ElementType, dims: &[i64], iota_dimension: i64) -> Op<'_> {
        self.op(unsafe { sys::kiln_op_iota(self.raw(), element_type.raw(), opt_ptr(dims), dims.len(), iota_dimension) })
    }

    // --- Elementwise

    binary_ops! {
        add, add_broadcast => kiln_op_add;
        sub, sub_broadcast => kiln_op_sub;
        mul, mul_broadcast => kiln_op_mul;
        div, div_broadcast => kiln_op_div;
        rem, rem_broadcast => kiln_op_rem;
        max, max_broadcast => kiln_op_max;
        min, min_broadcast => kiln_op_min;
        pow, pow_broadcast => kiln_op_pow;
        atan2, atan2_broadcast => kiln_op_atan2;
        and, and_broadcast => kiln_op_and;
        or, or_broadcast => kiln_op_or;
        xor, xor_broadcast => kiln_op_xor;
        shift_left, shift_left_broadcast => kiln_op_shift_left;
        shift_right_arithmetic, shift_right_arithmetic_broadcast => kiln_op_shift_right_arithmetic;
        shift_right_logical, shift_right_logical_broadcast => kiln_op_shift_right_logical;
        complex, complex_broadcast => kiln_op_complex;
        eq, eq_broadcast => kiln_op_eq;
        ne, ne_broadcast => kiln_op_ne;
        ge, ge_broadcast => kiln_op_ge;
        gt, gt_broadcast => kiln_op_gt;
        le, le_broadcast => kiln_op_le;
        lt, lt_broadcast => kiln_op_lt;
    }

    /// Comparison with an explicit direction and type; result PRED.
    pub fn compare(
        &self,
        lhs: Op<'_>,
        rhs: Op<'_>,
        direction: ComparisonDirection,
        comparison_type: ComparisonType,
        broadcast_dimensions: &[i64],
    ) -> Op<'_> {
        let (l, r) = (self.id(lhs), self.id(rhs));
        self.op(unsafe {
            sys::kiln_op_compare(
                self.raw(),
                l,
                r,
                direction as i32,
                comparison_type as i32,
                opt_ptr(broadcast_dimensions),
                broadcast_dimensions.len(),
            )
        })
    }

    unary_ops! {
        abs => kiln_op_abs, neg => kiln_op_neg, not => kiln_op_not, sign => kiln_op_sign,
        floor => kiln_op_floor, ceil => kiln_op_ceil, round => kiln_op_round,
        round_nearest_even => kiln_op_round_nearest_even, exp => kiln_op_exp, expm1 => kiln_op_expm1,
        log => kiln_op_log, log1p => kiln_op_log1p, logistic => kiln_op_logistic, sqrt => kiln_op_sqrt,
        rsqrt => kiln_op_rsqrt, cbrt => kiln_op_cbrt, sin => kiln_op_sin, cos => kiln_op_cos,
        tan => kiln_op_tan, tanh => kiln_op_tanh, erf => kiln_op_erf, is_finite => kiln_op_is_finite,
        clz => kiln_op_clz, popcnt => kiln_op_popcnt, real => kiln_op_real, imag => kiln_op_imag,
        copy => kiln_op_copy, cross_replica_sum => kiln_op_cross_replica_sum,
        optimization_barrier => kiln_op_optimization_barrier,
    }

    /// `pred ? on_true : on_false`, elementwise.
    pub fn select(&self, pred: Op<'_>, on_true: Op<'_>, on_false: Op<'_>) -> Op<'_> {
        let (p, t, f) = (self.id(pred), self.id(on_true), self.id(on_false));
        self.op(unsafe { sys::kiln_op_select(self.raw(), p, t, f) })
    }

    /// `operand` clamped to `[min, max]`.
    pub fn clamp(&self, min: Op<'_>, operand: Op<'_>, max: Op<'_>) -> Op<'_> {
        let (a, x, b) = (self.id(min), self.id(operand), self.id(max));
        self.op(unsafe { sys::kiln_op_clamp(self.raw(), a, x, b) })
    }

    // --- Type changes

    /// Converts elements to `new_type`.
    pub fn convert(&self, operand: Op<'_>, new_type: ElementType) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_convert(self.raw(), x, new_type.raw()) })
    }

    /// Reinterprets the bits as `new_type`.
    pub fn bitcast_convert(&self, operand: Op<'_>, new_type: ElementType) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_bitcast_convert(self.raw(), x, new_type.raw()) })
    }

    /// Rounds floats to the given exponent and mantissa widths.
    pub fn reduce_precision(&self, operand: Op<'_>, exponent_bits: i64, mantissa_bits: i64) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_reduce_precision(self.raw(), x, exponent_bits, mantissa_bits) })
    }

    // --- Shape manipulation

    /// Adds major dimensions of sizes `broadcast_sizes`.
    pub fn broadcast(&self, operand: Op<'_>, broadcast_sizes: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_broadcast(self.raw(), x, opt_ptr(broadcast_sizes), broadcast_sizes.len()) })
    }

    /// Broadcasts to `out_dims`; operand dimension i maps to output dimension
    /// `broadcast_dimensions[i]`.
    pub fn broadcast_in_dim(&self, operand: Op<'_>, out_dims: &[i64], broadcast_dimensions: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe {
            sys::kiln_op_broadcast_in_dim(
                self.raw(),
                x,
                opt_ptr(out_dims),
                out_dims.len(),
                opt_ptr(broadcast_dimensions),
                broadcast_dimensions.len(),
            )
        })
    }

    /// Reshapes (row-major order) to `new_sizes`.
    pub fn reshape(&self, operand: Op<'_>, new_sizes: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_reshape(self.raw(), x, opt_ptr(new_sizes), new_sizes.len()) })
    }

    /// Transposes by `dimensions`, then reshapes to `new_sizes`.
    pub fn reshape_with_dimensions(&self, operand: Op<'_>, dimensions: &[i64], new_sizes: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe {
            sys::kiln_op_reshape_with_dimensions(
                self.raw(),
                x,
                opt_ptr(dimensions),
                dimensions.len(),
                opt_ptr(new_sizes),
                new_sizes.len(),
            )
        })
    }

    /// Merges the consecutive `dimensions` into one.
    pub fn collapse(&self, operand: Op<'_>, dimensions: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_collapse(self.raw(), x, opt_ptr(dimensions), dimensions.len()) })
    }

    /// Permutes dimensions.
    pub fn transpose(&self, operand: Op<'_>, permutation: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_transpose(self.raw(), x, opt_ptr(permutation), permutation.len()) })
    }

    /// Reverses the order of elements along `dimensions`.
    pub fn rev(&self, operand: Op<'_>, dimensions: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_rev(self.raw(), x, opt_ptr(dimensions), dimensions.len()) })
    }

    /// Concatenates `operands` along `dimension`.
    pub fn concat_in_dim(&self, operands: &[Op<'_>], dimension: i64) -> Op<'_> {
        let ids = self.ids(operands);
        self.op(unsafe { sys::kiln_op_concat_in_dim(self.raw(), opt_ptr(&ids), ids.len(), dimension) })
    }

    /// Pads each dimension by `edge_low`, `edge_high` and `interior` copies of the
    /// scalar `padding_value` (one entry per dimension in each list).
    pub fn pad(
        &self,
        operand: Op<'_>,
        padding_value: Op<'_>,
        edge_low: &[i64],
        edge_high: &[i64],
        interior: &[i64],
    ) -> Op<'_> {
        let (x, v) = (self.id(operand), self.id(padding_value));
        let rank = edge_low.len();
        same_len("pad lists", rank, &[edge_high.len(), interior.len()]);
        self.op(unsafe {
            sys::kiln_op_pad(self.raw(), x, v, opt_ptr(edge_low), opt_ptr(edge_high), opt_ptr(interior), rank)
        })
    }

    /// Static slice `[start, limit)` with `strides` (one entry per dimension in
    /// each list).
    pub fn slice(&self, operand: Op<'_>, start_indices: &[i64], limit_indices: &[i64], strides: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        let rank = start_indices.len();
        same_len("slice lists", rank, &[limit_indices.len(), strides.len()]);
        self.op(unsafe {
            sys::kiln_op_slice(self.raw(), x, opt_ptr(start_indices), opt_ptr(limit_indices), opt_ptr(strides), rank)
        })
    }

    /// Slice of one dimension.
    pub fn slice_in_dim(&self, operand: Op<'_>, start: i64, limit: i64, stride: i64, dimension: i64) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_slice_in_dim(self.raw(), x, start, limit, stride, dimension) })
    }

    /// Dynamic slice; `start_indices` is a rank-1 integer array (clamped in bounds).
    pub fn dynamic_slice(&self, operand: Op<'_>, start_indices: Op<'_>, slice_sizes: &[i64]) -> Op<'_> {
        let (x, s) = (self.id(operand), self.id(start_indices));
        self.op(unsafe { sys::kiln_op_dynamic_slice(self.raw(), x, s, opt_ptr(slice_sizes), slice_sizes.len()) })
    }

    /// Dynamic slice with one scalar start index per dimension (HLO form).
    pub fn dynamic_slice_scalars(&self, operand: Op<'_>, start_indices: &[Op<'_>], slice_sizes: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        let s = self.ids(start_indices);
        self.op(unsafe {
            sys::kiln_op_dynamic_slice_scalars(
                self.raw(),
                x,
                opt_ptr(&s),
                s.len(),
                opt_ptr(slice_sizes),
                slice_sizes.len(),
            )
        })
    }

    /// Writes `update` into `operand` at `start_indices` (a rank-1 integer array).
    pub fn dynamic_update_slice(&self, operand: Op<'_>, update: Op<'_>, start_indices: Op<'_>) -> Op<'_> {
        let (x, u, s) = (self.id(operand), self.id(update), self.id(start_indices));
        self.op(unsafe { sys::kiln_op_dynamic_update_slice(self.raw(), x, u, s) })
    }

    /// Dynamic update slice with one scalar start index per dimension.
    pub fn dynamic_update_slice_scalars(&self, operand: Op<'_>, update: Op<'_>, start_indices: &[Op<'_>]) -> Op<'_> {
        let (x, u) = (self.id(operand), self.id(update));
        let s = self.ids(start_indices);
        self.op(unsafe { sys::kiln_op_dynamic_update_slice_scalars(self.raw(), x, u, opt_ptr(&s), s.len()) })
    }

    /// Size of `dimension` as an S32 scalar.
    pub fn get_dimension_size(&self, operand: Op<'_>, dimension: i64) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_get_dimension_size(self.raw(), x, dimension) })
    }

    /// XLA Gather.
    pub fn gather(
        &self,
        operand: Op<'_>,
        start_indices: Op<'_>,
        dimension_numbers: &GatherDimensionNumbers<'_>,
        slice_sizes: &[i64],
        indices_are_sorted: bool,
    ) -> Op<'_> {
        let (x, s) = (self.id(operand), self.id(start_indices));
        let d = dimension_numbers;
        let raw = sys::kiln_gather_dimension_numbers_t {
            struct_size: std::mem::size_of::<sys::kiln_gather_dimension_numbers_t>(),
            offset_dims: opt_ptr(d.offset_dims),
            num_offset_dims: d.offset_dims.len(),
            collapsed_slice_dims: opt_ptr(d.collapsed_slice_dims),
            num_collapsed_slice_dims: d.collapsed_slice_dims.len(),
            start_index_map: opt_ptr(d.start_index_map),
            num_start_index_map: d.start_index_map.len(),
            index_vector_dim: d.index_vector_dim,
            operand_batching_dims: opt_ptr(d.operand_batching_dims),
            num_operand_batching_dims: d.operand_batching_dims.len(),
            start_indices_batching_dims: opt_ptr(d.start_indices_batching_dims),
            num_start_indices_batching_dims: d.start_indices_batching_dims.len(),
        };
        self.op(unsafe {
            sys::kiln_op_gather(
                self.raw(),
                x,
                s,
                &raw,
                opt_ptr(slice_sizes),
                slice_sizes.len(),
                indices_are_sorted.into(),
            )
        })
    }

    /// XLA Scatter over `operands` (a tuple result when there are several).
    #[allow(clippy::too_many_arguments)]
    pub fn scatter(
        &self,
        operands: &[Op<'_>],
        scatter_indices: Op<'_>,
        updates: &[Op<'_>],
        update_computation: &Computation,
        dimension_numbers: &ScatterDimensionNumbers<'_>,
        indices_are_sorted: bool,
        unique_indices: bool,
    ) -> Op<'_> {
        let (ops, ups) = (self.ids(operands), self.ids(updates));
        let idx = self.id(scatter_indices);
        let d = dimension_numbers;
        let raw = sys::kiln_scatter_dimension_numbers_t {
            struct_size: std::mem::size_of::<sys::kiln_scatter_dimension_numbers_t>(),
            update_window_dims: opt_ptr(d.update_window_dims),
            num_update_window_dims: d.update_window_dims.len(),
            inserted_window_dims: opt_ptr(d.inserted_window_dims),
            num_inserted_window_dims: d.inserted_window_dims.len(),
            scatter_dims_to_operand_dims: opt_ptr(d.scatter_dims_to_operand_dims),
            num_scatter_dims_to_operand_dims: d.scatter_dims_to_operand_dims.len(),
            index_vector_dim: d.index_vector_dim,
            input_batching_dims: opt_ptr(d.input_batching_dims),
            num_input_batching_dims: d.input_batching_dims.len(),
            scatter_indices_batching_dims: opt_ptr(d.scatter_indices_batching_dims),
            num_scatter_indices_batching_dims: d.scatter_indices_batching_dims.len(),
        };
        self.op(unsafe {
            sys::kiln_op_scatter(
                self.raw(),
                opt_ptr(&ops),
                ops.len(),
                idx,
                opt_ptr(&ups),
                ups.len(),
                update_computation.as_raw(),
                &raw,
                indices_are_sorted.into(),
                unique_indices.into(),
            )
        })
    }

    // --- Tuples

    /// A tuple of `elements`.
    pub fn tuple(&self, elements: &[Op<'_>]) -> Op<'_> {
        let ids = self.ids(elements);
        self.op(unsafe { sys::kiln_op_tuple(self.raw(), opt_ptr(&ids), ids.len()) })
    }

    /// Element `index` of a tuple.
    pub fn get_tuple_element(&self, tuple: Op<'_>, index: i64) -> Op<'_> {
        let t = self.id(tuple);
        self.op(unsafe { sys::kiln_op_get_tuple_element(self.raw(), t, index) })
    }

    // --- Contractions

    /// Vector/matrix dot product.
    pub fn dot(&self, lhs: Op<'_>, rhs: Op<'_>) -> Op<'_> {
        let (l, r) = (self.id(lhs), self.id(rhs));
        self.op(unsafe { sys::kiln_op_dot(self.raw(), l, r) })
    }

    /// General dot with contracting and batch dimensions.
    pub fn dot_general(&self, lhs: Op<'_>, rhs: Op<'_>, dimension_numbers: &DotDimensionNumbers<'_>) -> Op<'_> {
        let (l, r) = (self.id(lhs), self.id(rhs));
        let d = dimension_numbers;
        let raw = sys::kiln_dot_dimension_numbers_t {
            struct_size: std::mem::size_of::<sys::kiln_dot_dimension_numbers_t>(),
            lhs_contracting_dimensions: opt_ptr(d.lhs_contracting_dimensions),
            num_lhs_contracting_dimensions: d.lhs_contracting_dimensions.len(),
            rhs_contracting_dimensions: opt_ptr(d.rhs_contracting_dimensions),
            num_rhs_contracting_dimensions: d.rhs_contracting_dimensions.len(),
            lhs_batch_dimensions: opt_ptr(d.lhs_batch_dimensions),
            num_lhs_batch_dimensions: d.lhs_batch_dimensions.len(),
            rhs_batch_dimensions: opt_ptr(d.rhs_batch_dimensions),
            num_rhs_batch_dimensions: d.rhs_batch_dimensions.len(),
        };
        self.op(unsafe { sys::kiln_op_dot_general(self.raw(), l, r, &raw) })
    }

    /// Sets the precision of a dot's or convolution's two operands; returns
    /// the same op (an invalid op, with the builder's error set, for any other op).
    pub fn set_precision(&self, op: Op<'_>, lhs: Precision, rhs: Precision) -> Op<'_> {
        let id = self.id(op);
        self.op(unsafe { sys::kiln_op_set_precision(self.raw(), id, lhs as i32, rhs as i32) })
    }

    /// XLA's fft over the operand's `fft_length.len()` (1 to 3) trailing
    /// dimensions: FFT/IFFT keep a complex shape, RFFT takes f32/f64 to
    /// c64/c128 with the last dimension `fft_length[last]/2+1`, IRFFT takes that
    /// back; the inverses scale by 1/N, as NumPy's.
    pub fn fft(&self, operand: Op<'_>, fft_type: FftType, fft_length: &[i64]) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_fft(self.raw(), x, fft_type as i32, opt_ptr(fft_length), fft_length.len()) })
    }

    /// Convolution: NCHW input, OIHW kernel, no dilation; one stride per spatial
    /// dimension.
    pub fn conv(&self, lhs: Op<'_>, rhs: Op<'_>, window_strides: &[i64], padding: Padding) -> Op<'_> {
        let (l, r) = (self.id(lhs), self.id(rhs));
        self.op(unsafe {
            sys::kiln_op_conv(self.raw(), l, r, opt_ptr(window_strides), window_strides.len(), padding as i32)
        })
    }

    /// The general convolution. `padding` is one `(low, high)` pair per spatial
    /// dimension; dilations may be `None` (all 1).
    #[allow(clippy::too_many_arguments)]
    pub fn conv_general_dilated(
        &self,
        lhs: Op<'_>,
        rhs: Op<'_>,
        window_strides: &[i64],
        padding: &[(i64, i64)],
        lhs_dilation: Option<&[i64]>,
        rhs_dilation: Option<&[i64]>,
        dimension_numbers: &ConvDimensionNumbers<'_>,
        feature_group_count: i64,
        batch_group_count: i64,
    ) -> Op<'_> {
        let (l, r) = (self.id(lhs), self.id(rhs));
        let n = window_strides.len();
        let dn = dimension_numbers.to_raw();
        let len = |o: Option<&[i64]>| o.map_or(n, <[i64]>::len);
        same_len(
            "conv_general_dilated lists",
            n,
            &[padding.len(), dn.num_spatial_dimensions, len(lhs_dilation), len(rhs_dilation)],
        );
        let low: Vec<i64> = padding.iter().map(|p| p.0).collect();
        let high: Vec<i64> = padding.iter().map(|p| p.1).collect();
        self.op(unsafe {
            sys::kiln_op_conv_general_dilated(
                self.raw(),
                l,
                r,
                opt_ptr(window_strides),
                opt_ptr(&low),
                opt_ptr(&high),
                opt_slice(lhs_dilation),
                opt_slice(rhs_dilation),
                n,
                &dn,
                feature_group_count,
                batch_group_count,
            )
        })
    }

    // --- Reductions, windows, maps and sorts

    /// Reduces `dimensions` of `operand` with `computation` from `init_value`.
    pub fn reduce(&self, operand: Op<'_>, init_value: Op<'_>, computation: &Computation, dimensions: &[i64]) -> Op<'_> {
        let (x, i) = (self.id(operand), self.id(init_value));
        self.op(unsafe {
            sys::kiln_op_reduce(self.raw(), x, i, computation.as_raw(), opt_ptr(dimensions), dimensions.len())
        })
    }

    /// Variadic reduce: N operands and N init values; a tuple result.
    pub fn reduce_variadic(
        &self,
        operands: &[Op<'_>],
        init_values: &[Op<'_>],
        computation: &Computation,
        dimensions: &[i64],
    ) -> Op<'_> {
        same_len("reduce_variadic operands and init values", operands.len(), &[init_values.len()]);
        let (o, i) = (self.ids(operands), self.ids(init_values));
        self.op(unsafe {
            sys::kiln_op_reduce_variadic(
                self.raw(),
                opt_ptr(&o),
                opt_ptr(&i),
                o.len(),
                computation.as_raw(),
                opt_ptr(dimensions),
                dimensions.len(),
            )
        })
    }

    /// Windowed reduction (one window size and stride per dimension).
    pub fn reduce_window(
        &self,
        operand: Op<'_>,
        init_value: Op<'_>,
        computation: &Computation,
        window_dimensions: &[i64],
        window_strides: &[i64],
        padding: Padding,
    ) -> Op<'_> {
        let (x, i) = (self.id(operand), self.id(init_value));
        same_len("reduce_window lists", window_dimensions.len(), &[window_strides.len()]);
        self.op(unsafe {
            sys::kiln_op_reduce_window(
                self.raw(),
                x,
                i,
                computation.as_raw(),
                opt_ptr(window_dimensions),
                opt_ptr(window_strides),
                window_dimensions.len(),
                padding as i32,
            )
        })
    }

    /// Applies `computation` elementwise over `operands`.
    pub fn map(&self, operands: &[Op<'_>], computation: &Computation, dimensions: &[i64]) -> Op<'_> {
        let o = self.ids(operands);
        self.op(unsafe {
            sys::kiln_op_map(
                self.raw(),
                opt_ptr(&o),
                o.len(),
                computation.as_raw(),
                opt_ptr(dimensions),
                dimensions.len(),
            )
        })
    }

    /// Sorts ascending along the last dimension.
    pub fn sort(&self, operand: Op<'_>) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_sort(self.raw(), x) })
    }

    /// Sorts `operands` together by `comparator` along `dimension`.
    pub fn sort_variadic(
        &self,
        operands: &[Op<'_>],
        comparator: &Computation,
        dimension: i64,
        is_stable: bool,
    ) -> Op<'_> {
        let o = self.ids(operands);
        self.op(unsafe {
            sys::kiln_op_sort_variadic(
                self.raw(),
                opt_ptr(&o),
                o.len(),
                comparator.as_raw(),
                dimension,
                is_stable.into(),
            )
        })
    }

    /// Reduces across replicas with `computation`.
    pub fn all_reduce(&self, operand: Op<'_>, computation: &Computation) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_all_reduce(self.raw(), x, computation.as_raw()) })
    }

    // --- Batch normalisation

    /// Batch-norm training: the tuple (output, batch mean, batch variance).
    pub fn batch_norm_training(
        &self,
        operand: Op<'_>,
        scale: Op<'_>,
        offset: Op<'_>,
        epsilon: f32,
        feature_index: i64,
    ) -> Op<'_> {
        let (x, s, o) = (self.id(operand), self.id(scale), self.id(offset));
        self.op(unsafe { sys::kiln_op_batch_norm_training(self.raw(), x, s, o, epsilon, feature_index) })
    }

    /// Batch-norm inference.
    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm_inference(
        &self,
        operand: Op<'_>,
        scale: Op<'_>,
        offset: Op<'_>,
        mean: Op<'_>,
        variance: Op<'_>,
        epsilon: f32,
        feature_index: i64,
    ) -> Op<'_> {
        let (x, s, o, m, v) = (self.id(operand), self.id(scale), self.id(offset), self.id(mean), self.id(variance));
        self.op(unsafe { sys::kiln_op_batch_norm_inference(self.raw(), x, s, o, m, v, epsilon, feature_index) })
    }

    /// Batch-norm gradient: the tuple (grad operand, grad scale, grad offset).
    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm_grad(
        &self,
        operand: Op<'_>,
        scale: Op<'_>,
        mean: Op<'_>,
        variance: Op<'_>,
        grad_output: Op<'_>,
        epsilon: f32,
        feature_index: i64,
    ) -> Op<'_> {
        let (x, s, m, v, g) =
            (self.id(operand), self.id(scale), self.id(mean), self.id(variance), self.id(grad_output));
        self.op(unsafe { sys::kiln_op_batch_norm_grad(self.raw(), x, s, m, v, g, epsilon, feature_index) })
    }

    // --- Control flow

    /// Calls `computation` on `operands`.
    pub fn call(&self, computation: &Computation, operands: &[Op<'_>]) -> Op<'_> {
        let o = self.ids(operands);
        self.op(unsafe { sys::kiln_op_call(self.raw(), computation.as_raw(), opt_ptr(&o), o.len()) })
    }

    /// `while condition(x) { x = body(x) }` from `init`.
    pub fn while_loop(&self, condition: &Computation, body: &Computation, init: Op<'_>) -> Op<'_> {
        let i = self.id(init);
        self.op(unsafe { sys::kiln_op_while(self.raw(), condition.as_raw(), body.as_raw(), i) })
    }

    /// `predicate ? true_computation(true_operand) : false_computation(false_operand)`.
    pub fn conditional(
        &self,
        predicate: Op<'_>,
        true_operand: Op<'_>,
        true_computation: &Computation,
        false_operand: Op<'_>,
        false_computation: &Computation,
    ) -> Op<'_> {
        let (p, t, f) = (self.id(predicate), self.id(true_operand), self.id(false_operand));
        self.op(unsafe {
            sys::kiln_op_conditional(self.raw(), p, t, true_computation.as_raw(), f, false_computation.as_raw())
        })
    }

    /// Runs branch `branch_index` (S32; out of range runs the last) on its operand.
    pub fn conditional_indexed(&self, branch_index: Op<'_>, branches: &[(&Computation, Op<'_>)]) -> Op<'_> {
        let idx = self.id(branch_index);
        let comps: Vec<*const sys::kiln_computation_t> = branches.iter().map(|b| b.0.as_raw().cast_const()).collect();
        let ops: Vec<sys::kiln_op_t> = branches.iter().map(|b| self.id(b.1)).collect();
        self.op(unsafe {
            sys::kiln_op_conditional_indexed(self.raw(), idx, opt_ptr(&comps), opt_ptr(&ops), branches.len())
        })
    }

    // --- Random numbers

    /// Uniform numbers in `[a, b)` of the given shape.
    pub fn rng_uniform(&self, a: Op<'_>, b: Op<'_>, element_type: ElementType, dims: &[i64]) -> Op<'_> {
        let (a, b) = (self.id(a), self.id(b));
        self.op(unsafe { sys::kiln_op_rng_uniform(self.raw(), a, b, element_type.raw(), opt_ptr(dims), dims.len()) })
    }

    /// Normal numbers with mean `mu` and deviation `sigma`.
    pub fn rng_normal(&self, mu: Op<'_>, sigma: Op<'_>, element_type: ElementType, dims: &[i64]) -> Op<'_> {
        let (m, s) = (self.id(mu), self.id(sigma));
        self.op(unsafe { sys::kiln_op_rng_normal(self.raw(), m, s, element_type.raw(), opt_ptr(dims), dims.len()) })
    }

    /// Bernoulli draws with probability `p`.
    pub fn rng_bernoulli(&self, p: Op<'_>, element_type: ElementType, dims: &[i64]) -> Op<'_> {
        let p = self.id(p);
        self.op(unsafe { sys::kiln_op_rng_bernoulli(self.raw(), p, element_type.raw(), opt_ptr(dims), dims.len()) })
    }

    /// The tuple (new state, bits) with bits of the given shape.
    pub fn rng_bit_generator(
        &self,
        algorithm: RngAlgorithm,
        initial_state: Op<'_>,
        element_type: ElementType,
        dims: &[i64],
    ) -> Op<'_> {
        let s = self.id(initial_state);
        self.op(unsafe {
            sys::kiln_op_rng_bit_generator(
                self.raw(),
                algorithm as i32,
                s,
                element_type.raw(),
                opt_ptr(dims),
                dims.len(),
            )
        })
    }

    // --- Host communication, tokens and custom calls

    /// Reads the next array queued by [`crate::Client::transfer_to_infeed`].
    pub fn infeed(&self, element_type: ElementType, dims: &[i64]) -> Op<'_> {
        self.op(unsafe { sys::kiln_op_infeed(self.raw(), element_type.raw(), opt_ptr(dims), dims.len(), ptr::null()) })
    }

    /// Sends `operand` to the host.
    pub fn outfeed(&self, operand: Op<'_>) -> Op<'_> {
        let x = self.id(operand);
        self.op(unsafe { sys::kiln_op_outfeed(self.raw(), x, ptr::null()) })
    }

    /// Joins tokens.
    pub fn after_all(&self, tokens: &[Op<'_>]) -> Op<'_> {
        let t = self.ids(tokens);
        self.op(unsafe { sys::kiln_op_after_all(self.raw(), opt_ptr(&t), t.len()) })
    }

    /// A fresh token.
    pub fn create_token(&self) -> Op<'_> {
        self.op(unsafe { sys::kiln_op_create_token(self.raw()) })
    }

    /// Calls user-defined op `name` (see [`crate::OpDef`]) with `attrs`, the
    /// attribute dictionary text (`"{preserve_index = 2}"`; `None` for none).
    /// Errors (a wrong operand type, a bad attribute, ...) are the builder's.
    ///
    /// # Panics
    /// If `name` or `attrs` contains a NUL byte.
    pub fn call_registered(&self, name: &str, operands: &[Op<'_>], attrs: Option<&str>) -> Op<'_> {
        let o = self.ids(operands);
        let name = cstr_arg("op name", name);
        let attrs = attrs.map(|s| cstr_arg("attributes", s));
        self.op(unsafe {
            sys::kiln_op_call_registered(
                self.raw(),
                name.as_ptr(),
                opt_ptr(&o),
                o.len(),
                attrs.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
            )
        })
    }

    /// Calls the custom-call target `target` (see [`crate::register_custom_call`]).
    ///
    /// # Panics
    /// If `target` or `opaque` contains a NUL byte.
    pub fn custom_call(
        &self,
        target: &str,
        operands: &[Op<'_>],
        shape: &Shape,
        opaque: Option<&str>,
        has_side_effect: bool,
    ) -> Op<'_> {
        let o = self.ids(operands);
        let target = cstr_arg("custom-call target", target);
        let opaque = opaque.map(|s| cstr_arg("custom-call opaque", s));
        self.op(unsafe {
            sys::kiln_op_custom_call(
                self.raw(),
                target.as_ptr(),
                opt_ptr(&o),
                o.len(),
                shape.element_type.raw(),
                opt_ptr(&shape.dims),
                shape.dims.len(),
                opaque.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
                has_side_effect.into(),
            )
        })
    }
}

impl Drop for Builder {
    fn drop(&mut self) {
        unsafe { sys::kiln_builder_destroy(self.raw()) }
    }
}

/// The C API passes these lists with one shared length; lists of different
/// lengths are a caller bug.
fn same_len(what: &str, n: usize, others: &[usize]) {
    assert!(others.iter().all(|&m| m == n), "kiln: {what} must have equal lengths ({n} vs {others:?})");
}

fn cstr_arg(what: &str, s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| panic!("kiln: {what} contains a NUL byte: {s:?}"))
}
