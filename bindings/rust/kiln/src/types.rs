//! Element types, the `Element` trait for host data, and shapes.

use std::ffi::CStr;
use std::fmt;

use kiln_sys as sys;

/// Element types as XLA names them (`KILN_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum ElementType {
    Pred = sys::KILN_TYPE_PRED,
    S8 = sys::KILN_TYPE_S8,
    S16 = sys::KILN_TYPE_S16,
    S32 = sys::KILN_TYPE_S32,
    S64 = sys::KILN_TYPE_S64,
    U8 = sys::KILN_TYPE_U8,
    U16 = sys::KILN_TYPE_U16,
    U32 = sys::KILN_TYPE_U32,
    U64 = sys::KILN_TYPE_U64,
    F16 = sys::KILN_TYPE_F16,
    BF16 = sys::KILN_TYPE_BF16,
    F32 = sys::KILN_TYPE_F32,
    F64 = sys::KILN_TYPE_F64,
    C64 = sys::KILN_TYPE_C64,
    C128 = sys::KILN_TYPE_C128,
    Tuple = sys::KILN_TYPE_TUPLE,
    Token = sys::KILN_TYPE_TOKEN,
}

impl ElementType {
    /// The type for a raw `kiln_element_type_t`, `None` for INVALID and unknown values.
    pub fn from_raw(raw: i32) -> Option<ElementType> {
        use ElementType::*;
        const ALL: [ElementType; 17] =
            [Pred, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128, Tuple, Token];
        ALL.into_iter().find(|t| t.raw() == raw)
    }

    /// The numeric value (`KILN_TYPE_*`).
    pub fn raw(self) -> i32 {
        self as i32
    }

    /// The lower-case HLO name, e.g. `"f32"`.
    pub fn name(self) -> &'static str {
        // SAFETY: static string from the library.
        unsafe { CStr::from_ptr(sys::kiln_element_type_name(self.raw())) }.to_str().unwrap_or("invalid")
    }

    /// Bytes per element; 0 for tuple and token.
    pub fn byte_width(self) -> usize {
        // SAFETY: plain query.
        unsafe { sys::kiln_element_type_byte_width(self.raw()) }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values have the memory layout of a Kiln element type, so
/// that slices of it can be copied to and from buffers. Implemented for `bool`
/// (PRED), the fixed-width integers and `f32`/`f64`. Other element types (F16,
/// BF16, complex) go through the byte-level functions.
pub trait Element: Copy + Send + Sync + sealed::Sealed + 'static {
    /// The element type this Rust type stands for.
    const TYPE: ElementType;
}

macro_rules! element {
    ($($t:ty => $e:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const TYPE: ElementType = ElementType::$e;
        }
    )*};
}
element!(bool => Pred, i8 => S8, i16 => S16, i32 => S32, i64 => S64, u8 => U8, u16 => U16,
         u32 => U32, u64 => U64, f32 => F32, f64 => F64);

/// An array shape: element type and dimensions (row-major). A tuple has
/// [`ElementType::Tuple`] and no dimensions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    pub element_type: ElementType,
    pub dims: Vec<i64>,
}

impl Shape {
    pub fn new(element_type: ElementType, dims: &[i64]) -> Shape {
        Shape { element_type, dims: dims.to_vec() }
    }

    /// Number of elements (1 for a scalar).
    pub fn element_count(&self) -> i64 {
        self.dims.iter().product()
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element_type)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}
