//! User-defined ops: an op defined from Rust (TensorFlow-style specs, as the
//! seed's "Adding an op" describes them) with Rust kernels that the cpu and
//! interpreter backends run. A builder calls it with
//! [`Builder::call_registered`](crate::Builder::call_registered); a gradient
//! ([`OpDef::grad`]) makes it differentiable by
//! [`Computation::value_and_grad`](crate::Computation::value_and_grad).
//!
//! ```
//! use kiln::{ElementType, KernelFrame, OpDef};
//!
//! # fn main() -> kiln::Result<()> {
//! OpDef::new("DocZeroOut").input("to_zero: int32").output("zeroed: int32").register()?;
//! kiln::register_kernel("DocZeroOut", "host", Some(ElementType::S32), |f: &mut KernelFrame<'_>| {
//!     let x = f.arg::<i32>(0).to_vec();
//!     let out = f.result_mut::<i32>(0);
//!     out.fill(0);
//!     if let Some(first) = x.first() {
//!         out[0] = *first;
//!     }
//!     Ok(())
//! })?;
//! # Ok(())
//! # }
//! ```
//!
//! Ops and kernels live until the process exits; a taken name is
//! [`Code::AlreadyExists`](crate::Code::AlreadyExists).

use std::ffi::{c_void, CStr, CString};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use kiln_sys as sys;

use crate::error::{c_string, check};
use crate::{Builder, Code, Element, ElementType, Error, Op, Result};

/// The definition of an op: specs like `"preserve_index: int >= 0 = 0"`,
/// `"T: {float, int32}"`, `"N: int >= 1"` (attributes) and `"to_zero: int32"`,
/// `"to_zero: T"`, `"in: N * T"` (inputs and outputs).
#[derive(Clone, Default)]
pub struct OpDef {
    name: String,
    attrs: Vec<String>,
    inputs: Vec<String>,
    outputs: Vec<String>,
    doc: String,
    grad: Option<Arc<GradFn>>,
    shape: Option<Arc<ShapeFn>>,
}

impl fmt::Debug for OpDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpDef")
            .field("name", &self.name)
            .field("attrs", &self.attrs)
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .field("doc", &self.doc)
            .field("grad", &self.grad.is_some())
            .field("shape_fn", &self.shape.is_some())
            .finish()
    }
}

type GradFn = dyn for<'b> Fn(&GradFrame<'b>) -> Result<Vec<Option<Op<'b>>>> + Send + Sync;
type ShapeFn = dyn Fn(&mut ShapeFrame<'_>) -> Result<()> + Send + Sync;

/// An op's user data: its gradient and shape functions.
struct Callbacks {
    grad: Option<Arc<GradFn>>,
    shape: Option<Arc<ShapeFn>>,
}

/// What a shape function gets when a builder calls the op: the arguments'
/// element types and dims, the results' (their types come from the
/// definition; their dims start as those of the argument at the same
/// position, else of argument 0, else a scalar) and the call's attributes.
/// Lives for one call.
pub struct ShapeFrame<'a> {
    frame: &'a mut sys::kiln_op_call_frame_t,
}

impl ShapeFrame<'_> {
    /// The op's name.
    pub fn op_name(&self) -> &str {
        unsafe { CStr::from_ptr(self.frame.op_name) }.to_str().unwrap_or("")
    }
    fn buffer(&self, results: bool, i: usize) -> &sys::kiln_op_buffer_t {
        let buffers = unsafe {
            if results {
                slice(self.frame.results, self.frame.num_results)
            } else {
                slice(self.frame.args, self.frame.num_args)
            }
        };
        &buffers[i]
    }
    /// How many arguments and results there are.
    pub fn num_args(&self) -> usize {
        self.frame.num_args
    }
    pub fn num_results(&self) -> usize {
        self.frame.num_results
    }
    /// Argument `i`'s element type and dims. Panics past the arguments.
    pub fn arg_type(&self, i: usize) -> Option<ElementType> {
        ElementType::from_raw(self.buffer(false, i).r#type)
    }
    pub fn arg_dims(&self, i: usize) -> Vec<i64> {
        let b = self.buffer(false, i);
        unsafe { slice(b.dims, b.rank) }.to_vec()
    }
    /// Result `i`'s element type and dims so far. Panics past the results.
    pub fn result_type(&self, i: usize) -> Option<ElementType> {
        ElementType::from_raw(self.buffer(true, i).r#type)
    }
    pub fn result_dims(&self, i: usize) -> Vec<i64> {
        let b = self.buffer(true, i);
        unsafe { slice(b.dims, b.rank) }.to_vec()
    }
    /// Attribute `name`, if the op has one by that name.
    pub fn attr(&self, name: &str) -> Option<AttrValue> {
        let attrs = unsafe { slice(self.frame.attrs, self.frame.num_attrs) };
        attrs.iter().find(|a| unsafe { CStr::from_ptr(a.name) }.to_bytes() == name.as_bytes()).map(attr_value)
    }
    /// Sets result `i`'s dims. Errors: an index past the results
    /// (OutOfRange), a negative size (InvalidArgument).
    pub fn set_result_dims(&mut self, i: usize, dims: &[i64]) -> Result<()> {
        check(unsafe { sys::kiln_user_op_frame_set_result_dims(self.frame, i, dims.as_ptr(), dims.len()) })
    }
}

/// What a gradient function gets: the builder of the gradient computation
/// (the library's, for this call only), the op's operands, its outputs (one
/// per output array) and their cotangents as ops of that builder, and the
/// call's attributes. The function returns one cotangent per operand (fewer
/// is allowed), each of its operand's shape; `None` means no gradient (zero).
pub struct GradFrame<'b> {
    builder: &'b Builder,
    operands: Vec<Op<'b>>,
    outputs: Vec<Op<'b>>,
    output_grads: Vec<Op<'b>>,
    attrs: &'b [sys::kiln_op_attr_t],
}

impl<'b> GradFrame<'b> {
    /// The builder to build the cotangents with.
    pub fn builder(&self) -> &'b Builder {
        self.builder
    }
    /// The op's operands.
    pub fn operands(&self) -> &[Op<'b>] {
        &self.operands
    }
    /// The op's outputs, one per output array.
    pub fn outputs(&self) -> &[Op<'b>] {
        &self.outputs
    }
    /// The cotangents of the outputs.
    pub fn output_grads(&self) -> &[Op<'b>] {
        &self.output_grads
    }
    /// Attribute `name`, if the op has one by that name.
    pub fn attr(&self, name: &str) -> Option<AttrValue> {
        self.attrs.iter().find(|a| unsafe { CStr::from_ptr(a.name) }.to_bytes() == name.as_bytes()).map(attr_value)
    }
}

impl OpDef {
    /// An empty definition of op `name`.
    pub fn new(name: &str) -> OpDef {
        OpDef { name: name.to_owned(), ..OpDef::default() }
    }
    /// Adds an attribute spec.
    pub fn attr(mut self, spec: &str) -> OpDef {
        self.attrs.push(spec.to_owned());
        self
    }
    /// Adds an input spec.
    pub fn input(mut self, spec: &str) -> OpDef {
        self.inputs.push(spec.to_owned());
        self
    }
    /// Adds an output spec.
    pub fn output(mut self, spec: &str) -> OpDef {
        self.outputs.push(spec.to_owned());
        self
    }
    /// Sets the documentation text.
    pub fn doc(mut self, doc: &str) -> OpDef {
        doc.clone_into(&mut self.doc);
        self
    }

    /// Sets the gradient (after TensorFlow's `RegisterGradient`): `f` builds
    /// the operands' cotangents when autodiff differentiates a call of the op.
    /// An error it returns reaches the caller of the differentiation with its
    /// code; a panic is caught and reported as Internal.
    pub fn grad<F>(mut self, f: F) -> OpDef
    where
        F: for<'b> Fn(&GradFrame<'b>) -> Result<Vec<Option<Op<'b>>>> + Send + Sync + 'static,
    {
        self.grad = Some(Arc::new(f));
        self
    }

    /// Sets the shape function: `f` may change the result dims of each call
    /// with [`ShapeFrame::set_result_dims`], or refuse the call with an error
    /// that fails the build, naming the op; a panic is caught and reported
    /// as Internal.
    pub fn shape_fn<F>(mut self, f: F) -> OpDef
    where
        F: Fn(&mut ShapeFrame<'_>) -> Result<()> + Send + Sync + 'static,
    {
        self.shape = Some(Arc::new(f));
        self
    }

    /// Registers the op process-wide. Errors: a bad spec (InvalidArgument),
    /// a taken name (AlreadyExists).
    pub fn register(&self) -> Result<()> {
        let name = c_string("op name", &self.name)?;
        let mut def = ptr::null_mut();
        check(unsafe { sys::kiln_user_op_def_create(name.as_ptr(), &mut def) })?;
        let result = (|| {
            for spec in &self.attrs {
                let s = c_string("attribute spec", spec)?;
                check(unsafe { sys::kiln_user_op_def_add_attr(def, s.as_ptr()) })?;
            }
            for spec in &self.inputs {
                let s = c_string("input spec", spec)?;
                check(unsafe { sys::kiln_user_op_def_add_input(def, s.as_ptr()) })?;
            }
            for spec in &self.outputs {
                let s = c_string("output spec", spec)?;
                check(unsafe { sys::kiln_user_op_def_add_output(def, s.as_ptr()) })?;
            }
            let doc = c_string("doc", &self.doc)?;
            check(unsafe { sys::kiln_user_op_def_set_doc(def, doc.as_ptr()) })?;
            if self.grad.is_some() || self.shape.is_some() {
                if self.grad.is_some() {
                    check(unsafe { sys::kiln_user_op_def_set_grad_fn(def, Some(grad_trampoline)) })?;
                }
                if self.shape.is_some() {
                    check(unsafe { sys::kiln_user_op_def_set_shape_fn(def, Some(shape_trampoline)) })?;
                }
                // The library releases it with the definition, or keeps it for the registered op.
                let callbacks = Callbacks { grad: self.grad.clone(), shape: self.shape.clone() };
                let user_data = Box::into_raw(Box::new(callbacks)) as *mut c_void;
                check(unsafe { sys::kiln_user_op_def_set_user_data(def, user_data, Some(release_callbacks)) })?;
            }
            check(unsafe { sys::kiln_user_op_register(def) })
        })();
        unsafe { sys::kiln_user_op_def_destroy(def) };
        result
    }
}

/// An attribute value as a kernel sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Type(Option<ElementType>),
    Shape(Vec<i64>),
    /// Element type, dims and row-major bytes.
    Tensor(Option<ElementType>, Vec<i64>, Vec<u8>),
    List(Vec<AttrValue>),
}

unsafe fn slice<'a, T>(data: *const T, len: usize) -> &'a [T] {
    if len == 0 || data.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(data, len)
    }
}

fn attr_value(a: &sys::kiln_op_attr_t) -> AttrValue {
    unsafe {
        match a.kind {
            sys::KILN_OP_ATTR_INT => AttrValue::Int(a.i),
            sys::KILN_OP_ATTR_FLOAT => AttrValue::Float(a.f),
            sys::KILN_OP_ATTR_BOOL => AttrValue::Bool(a.i != 0),
            sys::KILN_OP_ATTR_STRING => {
                AttrValue::Str(String::from_utf8_lossy(slice(a.s.cast::<u8>(), a.s_size)).into_owned())
            }
            sys::KILN_OP_ATTR_TYPE => AttrValue::Type(ElementType::from_raw(a.r#type)),
            sys::KILN_OP_ATTR_SHAPE => AttrValue::Shape(slice(a.dims, a.rank).to_vec()),
            sys::KILN_OP_ATTR_TENSOR => AttrValue::Tensor(
                ElementType::from_raw(a.r#type),
                slice(a.dims, a.rank).to_vec(),
                slice(a.data.cast::<u8>(), a.byte_size).to_vec(),
            ),
            _ => AttrValue::List(slice(a.items, a.num_items).iter().map(attr_value).collect()),
        }
    }
}

/// What a kernel gets: its arguments, its results (which it fills, every
/// element) and the attributes (defaults and inferred type attributes
/// included). Lives for one call.
pub struct KernelFrame<'a> {
    frame: &'a sys::kiln_op_call_frame_t,
}

impl KernelFrame<'_> {
    /// The op's name.
    pub fn op_name(&self) -> &str {
        unsafe { CStr::from_ptr(self.frame.op_name) }.to_str().unwrap_or("")
    }
    fn buffers(&self, results: bool) -> &[sys::kiln_op_buffer_t] {
        unsafe {
            if results {
                slice(self.frame.results, self.frame.num_results)
            } else {
                slice(self.frame.args, self.frame.num_args)
            }
        }
    }
    /// How many arguments and results there are.
    pub fn num_args(&self) -> usize {
        self.frame.num_args
    }
    pub fn num_results(&self) -> usize {
        self.frame.num_results
    }
    /// Argument `i`'s element type and dims.
    pub fn arg_type(&self, i: usize) -> Option<ElementType> {
        ElementType::from_raw(self.buffers(false)[i].r#type)
    }
    pub fn arg_dims(&self, i: usize) -> &[i64] {
        let b = &self.buffers(false)[i];
        unsafe { slice(b.dims, b.rank) }
    }
    /// Argument `i`'s data. Panics when `T` is not its element type.
    pub fn arg<T: Element>(&self, i: usize) -> &[T] {
        let b = &self.buffers(false)[i];
        assert_eq!(b.r#type, T::TYPE.raw(), "kiln: argument {i} is not {:?}", T::TYPE);
        unsafe { slice(b.data.cast::<T>(), b.byte_size / std::mem::size_of::<T>()) }
    }
    /// Result `i`'s data to fill. Panics when `T` is not its element type.
    #[allow(clippy::mut_from_ref)]
    pub fn result_mut<T: Element>(&self, i: usize) -> &mut [T] {
        let b = &self.buffers(true)[i];
        assert_eq!(b.r#type, T::TYPE.raw(), "kiln: result {i} is not {:?}", T::TYPE);
        let len = b.byte_size / std::mem::size_of::<T>();
        if len == 0 {
            return &mut [];
        }
        unsafe { std::slice::from_raw_parts_mut(b.data.cast::<T>(), len) }
    }
    /// Attribute `name`, if the op has one by that name.
    pub fn attr(&self, name: &str) -> Option<AttrValue> {
        let attrs = unsafe { slice(self.frame.attrs, self.frame.num_attrs) };
        attrs.iter().find(|a| unsafe { CStr::from_ptr(a.name) }.to_bytes() == name.as_bytes()).map(attr_value)
    }
}

type Kernel = Box<dyn Fn(&mut KernelFrame<'_>) -> Result<()> + Send + Sync>;

fn status(code: Code, message: &str) -> *mut sys::kiln_status_t {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    unsafe { sys::kiln_status_create(code.raw(), message.as_ptr()) }
}

unsafe extern "C" fn trampoline(frame: *const sys::kiln_op_call_frame_t) -> *mut sys::kiln_status_t {
    let frame = &*frame;
    let kernel = &*(frame.user_data as *const Kernel);
    let mut view = KernelFrame { frame };
    match catch_unwind(AssertUnwindSafe(|| kernel(&mut view))) {
        Ok(Ok(())) => ptr::null_mut(),
        Ok(Err(e)) => status(e.code(), e.message()),
        Err(_) => status(Code::Internal, "the Rust kernel panicked"),
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn grad_trampoline(
    builder: *mut sys::kiln_builder_t,
    operands: *const sys::kiln_op_t,
    num_operands: usize,
    outputs: *const sys::kiln_op_t,
    output_grads: *const sys::kiln_op_t,
    num_outputs: usize,
    attrs: *const sys::kiln_op_attr_t,
    num_attrs: usize,
    operand_grads: *mut sys::kiln_op_t,
    user_data: *mut c_void,
) -> *mut sys::kiln_status_t {
    let Some(grad) = &(*(user_data as *const Callbacks)).grad else {
        return status(Code::Internal, "the op has no Rust gradient function");
    };
    let builder = Builder::borrowed(builder);
    let b: &Builder = &builder;
    let ops = |p: *const sys::kiln_op_t, n: usize| slice(p, n).iter().map(|&id| b.op(id)).collect::<Vec<_>>();
    let frame = GradFrame {
        builder: b,
        operands: ops(operands, num_operands),
        outputs: ops(outputs, num_outputs),
        output_grads: ops(output_grads, num_outputs),
        attrs: slice(attrs, num_attrs),
    };
    match catch_unwind(AssertUnwindSafe(|| grad(&frame))) {
        Ok(Ok(grads)) if grads.len() <= num_operands => {
            for (i, g) in grads.into_iter().enumerate() {
                if let Some(g) = g {
                    *operand_grads.add(i) = g.id();
                }
            }
            ptr::null_mut()
        }
        Ok(Ok(grads)) => status(
            Code::InvalidArgument,
            &format!("the gradient function returned {} cotangents for {num_operands} operand(s)", grads.len()),
        ),
        Ok(Err(e)) => status(e.code(), e.message()),
        Err(_) => status(Code::Internal, "the Rust gradient function panicked"),
    }
}

unsafe extern "C" fn shape_trampoline(frame: *mut sys::kiln_op_call_frame_t) -> *mut sys::kiln_status_t {
    let frame = &mut *frame;
    let Some(shape) = (*(frame.user_data as *const Callbacks)).shape.clone() else {
        return status(Code::Internal, "the op has no Rust shape function");
    };
    let mut view = ShapeFrame { frame };
    match catch_unwind(AssertUnwindSafe(|| shape(&mut view))) {
        Ok(Ok(())) => ptr::null_mut(),
        Ok(Err(e)) => status(e.code(), e.message()),
        Err(_) => status(Code::Internal, "the Rust shape function panicked"),
    }
}

unsafe extern "C" fn release_callbacks(user_data: *mut c_void) {
    drop(Box::from_raw(user_data as *mut Callbacks));
}

unsafe extern "C" fn release(user_data: *mut c_void) {
    drop(Box::from_raw(user_data as *mut Kernel));
}

/// Registers Rust kernel `f` of op `op` for `backend` ("cpu", "interpreter",
/// or "host" for both) and `element_type` (None: any type). An error it
/// returns (make one with [`Error::kernel`]) reaches the caller of the
/// execute with its code; a panic is caught and reported as Internal.
pub fn register_kernel<F>(op: &str, backend: &str, element_type: Option<ElementType>, f: F) -> Result<()>
where
    F: Fn(&mut KernelFrame<'_>) -> Result<()> + Send + Sync + 'static,
{
    let op = c_string("op name", op)?;
    let backend = c_string("backend", backend)?;
    let kernel: Box<Kernel> = Box::new(Box::new(f));
    let user_data = Box::into_raw(kernel) as *mut c_void;
    // On failure the library calls `release`, which frees the box.
    check(unsafe {
        sys::kiln_user_op_register_kernel(
            op.as_ptr(),
            backend.as_ptr(),
            element_type.map_or(sys::KILN_TYPE_INVALID, ElementType::raw),
            Some(trampoline),
            user_data,
            Some(release),
        )
    })
}

/// Registers a device kernel of op `op` for `backend` and `element_type`
/// (None: any type): a SPIR-V module for "vulkan", PTX text for "cuda", with
/// entry point `entry`, launched with the frame `kiln.h` documents for
/// `kiln_user_op_register_device_kernel` (a buffer per argument then per
/// result, each buffer's element count, then the op's int and bool
/// attributes). `block_size` and `grid_size` set the launch; 0 keeps the
/// default (64 invocations a workgroup on vulkan, 256 threads a block on
/// cuda; a grid covering result 0). Errors: code that is not SPIR-V or PTX
/// (InvalidArgument), an entry point it lacks (NotFound), a taken (backend,
/// type) (AlreadyExists).
pub fn register_device_kernel(
    op: &str,
    backend: &str,
    element_type: Option<ElementType>,
    code: &[u8],
    entry: &str,
    block_size: u32,
    grid_size: u32,
) -> Result<()> {
    let op = c_string("op name", op)?;
    let backend = c_string("backend", backend)?;
    let entry = c_string("entry point", entry)?;
    check(unsafe {
        sys::kiln_user_op_register_device_kernel_with_launch(
            op.as_ptr(),
            backend.as_ptr(),
            element_type.map_or(sys::KILN_TYPE_INVALID, ElementType::raw),
            code.as_ptr().cast(),
            code.len(),
            entry.as_ptr(),
            block_size,
            grid_size,
        )
    })
}

/// A description of every registered op, as `kiln info --ops` prints it.
pub fn registered_ops() -> Result<String> {
    let mut text = ptr::null_mut();
    check(unsafe { sys::kiln_user_op_registry_describe(&mut text) })?;
    let out = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
    unsafe { sys::kiln_string_destroy(text) };
    Ok(out)
}

impl Error {
    /// An error for a kernel to return: `code` and `message` reach the caller.
    pub fn kernel(code: Code, message: impl Into<String>) -> Error {
        Error::new(code, message)
    }
}
