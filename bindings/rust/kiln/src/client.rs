//! Clients, buffers and executables.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::path::Path;
use std::ptr::{self, NonNull};
use std::time::Duration;

use kiln_sys as sys;

use crate::error::{borrowed_str, c_string, check, Code, Error, Result};
use crate::types::{Element, ElementType, Shape};
use crate::{Cancellation, Computation, Device, Event};

/// A backend and its devices. Owns the executables and buffers made from it:
/// they borrow the client, so the compiler makes sure they are dropped first.
///
/// Thread-safe (`Send + Sync`): share it by reference between threads.
#[derive(Debug)]
pub struct Client {
    raw: NonNull<sys::kiln_client_t>,
}

// SAFETY: kiln.h: "a client ... may be used from several threads at once".
unsafe impl Send for Client {}
unsafe impl Sync for Client {}

impl Client {
    /// A client on the default backend ("cpu" when the library has it, else
    /// "interpreter").
    pub fn new() -> Result<Client> {
        Self::with_options(&ClientOptions::default())
    }

    /// A client on the named backend (see [`crate::backends`]). An unknown name is
    /// [`Code::NotFound`]; a backend that cannot run here is [`Code::Unavailable`].
    pub fn with_backend(backend: &str) -> Result<Client> {
        Self::with_options(&ClientOptions { backend: Some(backend), ..Default::default() })
    }

    /// A client with options: the backend and how many devices it presents.
    ///
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// let client = kiln::Client::with_options(&kiln::ClientOptions { num_devices: 4, ..Default::default() })?;
    /// assert_eq!(client.devices()?.len(), 4);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_options(options: &ClientOptions<'_>) -> Result<Client> {
        let name = options.backend.map(|b| c_string("backend", b)).transpose()?;
        let options = sys::kiln_client_options_t {
            backend: name.as_ref().map_or(ptr::null(), |n| n.as_ptr()),
            // Beyond i32 the library refuses it as it refuses any count above its limit.
            num_devices: i32::try_from(options.num_devices).unwrap_or(i32::MAX),
            ..Default::default()
        };
        let mut raw = ptr::null_mut();
        // SAFETY: options and out-param are valid for the call; `name` outlives it.
        check(unsafe { sys::kiln_client_create(&options, &mut raw) })?;
        Ok(Client { raw: NonNull::new(raw).expect("kiln_client_create returned NULL") })
    }

    /// The raw handle, for use with `kiln-sys`. Owned by `self`.
    pub fn as_raw(&self) -> *mut sys::kiln_client_t {
        self.raw.as_ptr()
    }

    /// The backend's name.
    pub fn backend_name(&self) -> Result<&str> {
        let mut name = ptr::null();
        // SAFETY: the string is owned by the client and lives as long as `self`.
        unsafe {
            check(sys::kiln_client_backend_name(self.raw.as_ptr(), &mut name))?;
            Ok(borrowed_str(name))
        }
    }

    /// Number of devices of the backend.
    pub fn device_count(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::kiln_client_device_count(self.raw.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// Description of device `index` ([`Code::OutOfRange`] past the end).
    pub fn device_description(&self, index: usize) -> Result<&str> {
        let mut d = ptr::null();
        // SAFETY: the string is owned by the client and lives as long as `self`.
        unsafe {
            check(sys::kiln_client_device_description(self.raw.as_ptr(), index, &mut d))?;
            Ok(borrowed_str(d))
        }
    }

    /// Device `index` ([`Code::OutOfRange`] past the end).
    pub fn device(&self, index: usize) -> Result<Device<'_>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_client_device(self.raw.as_ptr(), index, &mut raw) })?;
        // SAFETY: a device handle of this client, valid while it lives.
        Ok(unsafe { Device::from_raw(raw) })
    }

    /// The client's devices, in order.
    pub fn devices(&self) -> Result<Vec<Device<'_>>> {
        (0..self.device_count()?).map(|i| self.device(i)).collect()
    }

    /// Copies `data` (row-major, `dims` shape) into a new buffer on the first
    /// device. The element count must match `dims` ([`Code::InvalidArgument`]).
    pub fn buffer_from_slice<T: Element>(&self, data: &[T], dims: &[i64]) -> Result<Buffer<'_>> {
        // SAFETY: T is a plain element type; viewing it as bytes is sound.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
        self.buffer_from_bytes(T::TYPE, dims, bytes)
    }

    /// Copies raw row-major bytes of any array element type (e.g. F16, BF16,
    /// complex) into a new buffer.
    pub fn buffer_from_bytes(&self, element_type: ElementType, dims: &[i64], bytes: &[u8]) -> Result<Buffer<'_>> {
        self.buffer_with_layout(element_type, dims, None, bytes)
    }

    /// As [`Client::buffer_from_bytes`], with a device layout (`minor_to_major`,
    /// one entry per dimension).
    pub fn buffer_with_layout(
        &self,
        element_type: ElementType,
        dims: &[i64],
        minor_to_major: Option<&[i64]>,
        bytes: &[u8],
    ) -> Result<Buffer<'_>> {
        let mut raw = ptr::null_mut();
        // SAFETY: every pointer is valid for the stated length during the call; the
        // data is copied before it returns.
        check(unsafe {
            sys::kiln_client_buffer_from_host(
                self.raw.as_ptr(),
                element_type.raw(),
                opt_ptr(dims),
                dims.len(),
                minor_to_major.map_or(ptr::null(), |m| m.as_ptr()),
                bytes.as_ptr().cast::<c_void>(),
                bytes.len(),
                &mut raw,
            )
        })?;
        Ok(unsafe { Buffer::from_raw(raw) })
    }

    /// Reads a NumPy `.npy` file into a new buffer. Pass `Some(ElementType::BF16)`
    /// to read a two-byte void array as bf16; `None` otherwise.
    pub fn buffer_from_npy(&self, path: impl AsRef<Path>, expected: Option<ElementType>) -> Result<Buffer<'_>> {
        let path = path_cstring(path.as_ref())?;
        let mut raw = ptr::null_mut();
        check(unsafe {
            sys::kiln_client_buffer_from_npy_file(
                self.raw.as_ptr(),
                path.as_ptr(),
                expected.map_or(sys::KILN_TYPE_INVALID, ElementType::raw),
                &mut raw,
            )
        })?;
        Ok(unsafe { Buffer::from_raw(raw) })
    }

    /// Compiles `computation` with default options.
    pub fn compile(&self, computation: &Computation) -> Result<Executable<'_>> {
        self.compile_with(computation, &CompileOptions::default())
    }

    /// Compiles `computation`. An op the backend cannot run is
    /// [`Code::Unimplemented`]. The computation may be dropped afterwards.
    pub fn compile_with(&self, computation: &Computation, options: &CompileOptions) -> Result<Executable<'_>> {
        let opts = sys::kiln_compile_options_t {
            optimization_level: options.optimization_level,
            num_threads: options.num_threads,
            allow_unsafe_nan_math: i32::from(options.allow_unsafe_nan_math),
            ..Default::default()
        };
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_client_compile(self.raw.as_ptr(), computation.as_raw(), &opts, &mut raw) })?;
        // SAFETY: a successful compile returns an owned executable.
        let mut exe = Executable { raw: NonNull::new(raw).expect("NULL executable"), results: 0, _client: PhantomData };
        check(unsafe { sys::kiln_executable_result_count(raw, &mut exe.results) })?;
        Ok(exe)
    }

    /// Queues a host array for the next `infeed` op run by this client's
    /// executables.
    pub fn transfer_to_infeed<T: Element>(&self, data: &[T], dims: &[i64]) -> Result<()> {
        check(unsafe {
            sys::kiln_client_transfer_to_infeed(
                self.raw.as_ptr(),
                T::TYPE.raw(),
                opt_ptr(dims),
                dims.len(),
                data.as_ptr().cast::<c_void>(),
                std::mem::size_of_val(data),
            )
        })
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // SAFETY: owned handle; borrows keep buffers and executables from outliving it.
        unsafe { sys::kiln_client_destroy(self.raw.as_ptr()) }
    }
}

/// Options of [`Client::with_options`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientOptions<'a> {
    /// The backend (see [`crate::backends`]); `None` (the default) = "cpu" when
    /// the library has it, else "interpreter".
    pub backend: Option<&'a str>,
    /// How many devices the client presents; 0 (the default) = the backend's
    /// own count. The host backends ("cpu", "interpreter") split the machine
    /// into this many devices (at most 64); a GPU backend takes only 0 or its
    /// physical count (else [`Code::InvalidArgument`]).
    pub num_devices: usize,
}

/// Options of [`Client::compile_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompileOptions {
    /// 0 = only what correctness needs; 2 (the default) = all optimisations.
    pub optimization_level: i32,
    /// Threads for intra-op parallelism; 0 (the default) = one per core.
    pub num_threads: i32,
    /// `true` compiles a computation whose results depend on NaN or
    /// infinities even for a device whose driver may assume there are none
    /// (vulkan without float controls), which refuses it otherwise with
    /// [`Code::Unimplemented`]: such results may then be wrong. `false` (the
    /// default) refuses.
    pub allow_unsafe_nan_math: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        let d = sys::kiln_compile_options_t::default();
        CompileOptions {
            optimization_level: d.optimization_level,
            num_threads: d.num_threads,
            allow_unsafe_nan_math: d.allow_unsafe_nan_math != 0,
        }
    }
}

/// Options of [`Executable::execute_with`]: build them from `Default` with the
/// `with_*` methods or with `..Default::default()`.
///
/// ```
/// # fn main() -> kiln::Result<()> {
/// let cancellation = kiln::Cancellation::new()?;
/// let options = kiln::ExecuteOptions::default()
///     .with_timeout(std::time::Duration::from_secs(10))
///     .with_cancellation(&cancellation);
/// let same = kiln::ExecuteOptions {
///     timeout: Some(std::time::Duration::from_secs(10)),
///     cancellation: Some(&cancellation),
///     ..Default::default()
/// };
/// # assert_eq!(options.timeout, same.timeout);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecuteOptions<'a> {
    /// Seed of the rng ops: equal seeds give equal numbers.
    pub rng_seed: u64,
    /// A deadline relative to the start of the call: once it has passed the
    /// execution stops with [`Code::DeadlineExceeded`] (even inside a `while`
    /// loop that never ends). `None` (the default) waits as long as it takes. A
    /// zero duration is [`Code::InvalidArgument`] (the C API would read 0 as "no
    /// deadline"); one beyond `i64::MAX` nanoseconds (292 years) is cut to that.
    pub timeout: Option<Duration>,
    /// Stops the execution with [`Code::Cancelled`] once
    /// [`Cancellation::cancel`] is called, from any thread. Borrowed for as long
    /// as the options live, so it cannot be freed while an execution uses it.
    pub cancellation: Option<&'a Cancellation>,
    /// The device to run on, one of the executable's client; `None` (the
    /// default) = the first argument's device, or the client's first device
    /// when there are no arguments. Every argument must live on it (else
    /// [`Code::InvalidArgument`]; [`Buffer::copy_to`] moves one), and the
    /// results are made on it.
    pub device: Option<Device<'a>>,
}

impl<'a> ExecuteOptions<'a> {
    /// Sets [`ExecuteOptions::rng_seed`].
    pub fn with_rng_seed(self, rng_seed: u64) -> Self {
        ExecuteOptions { rng_seed, ..self }
    }

    /// Sets [`ExecuteOptions::timeout`].
    pub fn with_timeout(self, timeout: Duration) -> Self {
        ExecuteOptions { timeout: Some(timeout), ..self }
    }

    /// Sets [`ExecuteOptions::cancellation`].
    pub fn with_cancellation(self, cancellation: &'a Cancellation) -> Self {
        ExecuteOptions { cancellation: Some(cancellation), ..self }
    }

    /// Sets [`ExecuteOptions::device`].
    pub fn with_device(self, device: Device<'a>) -> Self {
        ExecuteOptions { device: Some(device), ..self }
    }

    /// The C struct. The cancellation pointer in it is borrowed from `self`.
    fn c_struct(&self) -> Result<sys::kiln_execute_options_t> {
        let timeout_ns = match self.timeout {
            None => 0,
            // Refused here rather than passed on: the C API reads 0 as "no deadline",
            // the opposite of what a zero timeout asks for.
            Some(t) if t.is_zero() => {
                return Err(Error::new(
                    Code::InvalidArgument,
                    "execute: timeout must be positive, got 0 (leave it None for no deadline)",
                ))
            }
            Some(t) => i64::try_from(t.as_nanos()).unwrap_or(i64::MAX),
        };
        Ok(sys::kiln_execute_options_t {
            rng_seed: self.rng_seed,
            timeout_ns,
            cancellation: self.cancellation.map_or(ptr::null_mut(), Cancellation::as_raw),
            device: self.device.map_or(ptr::null_mut(), |d| d.as_raw()),
            ..Default::default()
        })
    }
}

/// An immutable array in device memory, borrowed from its [`Client`].
/// Reads are thread-safe (`Send + Sync`).
#[derive(Debug)]
pub struct Buffer<'c> {
    raw: NonNull<sys::kiln_buffer_t>,
    _client: PhantomData<&'c Client>,
}

// SAFETY: kiln.h: buffers are immutable and their reads are thread-safe.
unsafe impl Send for Buffer<'_> {}
unsafe impl Sync for Buffer<'_> {}

impl<'c> Buffer<'c> {
    /// # Safety
    /// `raw` must be a non-NULL buffer the caller owns, made from the client `'c` borrows.
    pub(crate) unsafe fn from_raw(raw: *mut sys::kiln_buffer_t) -> Buffer<'c> {
        Buffer { raw: NonNull::new(raw).expect("NULL buffer"), _client: PhantomData }
    }

    /// The raw handle, for use with `kiln-sys`. Owned by `self`.
    pub fn as_raw(&self) -> *mut sys::kiln_buffer_t {
        self.raw.as_ptr()
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> Result<Device<'c>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_buffer_device(self.raw.as_ptr(), &mut raw) })?;
        // SAFETY: a device of the client borrowed for 'c.
        Ok(unsafe { Device::from_raw(raw) })
    }

    /// Copies the buffer (once it is ready) to a new buffer on `device`, which
    /// must belong to the same client (else [`Code::InvalidArgument`]).
    pub fn copy_to(&self, device: &Device<'_>) -> Result<Buffer<'c>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_buffer_copy_to_device(self.raw.as_ptr(), device.as_raw(), &mut raw) })?;
        // SAFETY: an owned buffer of the same client (the library checks).
        Ok(unsafe { Buffer::from_raw(raw) })
    }

    /// Whether the buffer reads host memory given to
    /// [`Device::buffer_alias_host`] in place (no copy was made).
    pub fn is_host_alias(&self) -> Result<bool> {
        let mut alias = 0;
        check(unsafe { sys::kiln_buffer_is_host_alias(self.raw.as_ptr(), &mut alias) })?;
        Ok(alias != 0)
    }

    /// An event that becomes ready when the buffer holds its data (at once for
    /// one made from host memory), with the error of the execution that was to
    /// fill it when that failed.
    pub fn ready_event(&self) -> Result<Event> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_buffer_ready_event(self.raw.as_ptr(), &mut raw) })?;
        // SAFETY: an owned event.
        Ok(unsafe { Event::from_raw(raw) })
    }

    /// The element type.
    pub fn element_type(&self) -> Result<ElementType> {
        let mut t = sys::KILN_TYPE_INVALID;
        check(unsafe { sys::kiln_buffer_element_type(self.raw.as_ptr(), &mut t) })?;
        ElementType::from_raw(t).ok_or_else(|| Error::new(Code::Internal, format!("unknown element type {t}")))
    }

    /// The dimensions.
    pub fn dims(&self) -> Result<Vec<i64>> {
        let mut rank = 0;
        check(unsafe { sys::kiln_buffer_rank(self.raw.as_ptr(), &mut rank) })?;
        let mut dims = vec![0i64; rank];
        check(unsafe { sys::kiln_buffer_dimensions(self.raw.as_ptr(), dims.as_mut_ptr(), rank) })?;
        Ok(dims)
    }

    /// Element type and dimensions.
    pub fn shape(&self) -> Result<Shape> {
        Ok(Shape { element_type: self.element_type()?, dims: self.dims()? })
    }

    /// The device layout's `minor_to_major`.
    pub fn minor_to_major(&self) -> Result<Vec<i64>> {
        let mut rank = 0;
        check(unsafe { sys::kiln_buffer_rank(self.raw.as_ptr(), &mut rank) })?;
        let mut m = vec![0i64; rank];
        check(unsafe { sys::kiln_buffer_minor_to_major(self.raw.as_ptr(), m.as_mut_ptr(), rank) })?;
        Ok(m)
    }

    /// Bytes of the row-major host copy.
    pub fn byte_size(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::kiln_buffer_byte_size(self.raw.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// Copies the buffer to a new vector (row-major). `T` must match the element
    /// type, else [`Code::InvalidArgument`]. Waits until the buffer is ready; when
    /// the asynchronous execution that was to fill it failed, returns its error.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let t = self.element_type()?;
        if t != T::TYPE {
            return Err(Error::new(Code::InvalidArgument, format!("buffer holds {t} elements, not {}", T::TYPE)));
        }
        let bytes = self.byte_size()?;
        let len = bytes / std::mem::size_of::<T>();
        let mut v = Vec::<T>::with_capacity(len);
        // SAFETY: the library writes exactly `bytes` bytes of valid T values
        // (PRED is 0 or 1) into the spare capacity.
        unsafe {
            check(sys::kiln_buffer_to_host(self.raw.as_ptr(), v.as_mut_ptr().cast::<c_void>(), bytes))?;
            v.set_len(len);
        }
        Ok(v)
    }

    /// Copies the buffer's row-major bytes (any element type).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let bytes = self.byte_size()?;
        let mut v = vec![0u8; bytes];
        check(unsafe { sys::kiln_buffer_to_host(self.raw.as_ptr(), v.as_mut_ptr().cast::<c_void>(), bytes) })?;
        Ok(v)
    }

    /// Writes the buffer as a NumPy `.npy` file.
    pub fn write_npy(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path_cstring(path.as_ref())?;
        check(unsafe { sys::kiln_buffer_to_npy_file(self.raw.as_ptr(), path.as_ptr()) })
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        unsafe { sys::kiln_buffer_destroy(self.raw.as_ptr()) }
    }
}

/// A compiled computation, borrowed from its [`Client`]. Thread-safe: several
/// threads may run it at once (`Send + Sync`).
#[derive(Debug)]
pub struct Executable<'c> {
    raw: NonNull<sys::kiln_executable_t>,
    results: usize,
    _client: PhantomData<&'c Client>,
}

// SAFETY: kiln.h: "an executable may run concurrently".
unsafe impl Send for Executable<'_> {}
unsafe impl Sync for Executable<'_> {}

impl<'c> Executable<'c> {
    /// The raw handle, for use with `kiln-sys`. Owned by `self`.
    pub fn as_raw(&self) -> *mut sys::kiln_executable_t {
        self.raw.as_ptr()
    }

    /// Number of arguments (array leaves of the entry's parameters).
    pub fn parameter_count(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::kiln_executable_parameter_count(self.raw.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// Number of results (array leaves of the entry's result).
    pub fn result_count(&self) -> usize {
        self.results
    }

    /// Element type of argument `index`.
    pub fn parameter_type(&self, index: usize) -> Result<ElementType> {
        let mut t = sys::KILN_TYPE_INVALID;
        check(unsafe { sys::kiln_executable_parameter_type(self.raw.as_ptr(), index, &mut t) })?;
        ElementType::from_raw(t).ok_or_else(|| Error::new(Code::Internal, format!("unknown element type {t}")))
    }

    /// Runs once on `arguments` (parameter order, tuples flattened) and returns
    /// the result leaves (tuples flattened).
    pub fn execute(&self, arguments: &[&Buffer<'c>]) -> Result<Vec<Buffer<'c>>> {
        self.execute_with(arguments, &ExecuteOptions::default())
    }

    /// As [`Executable::execute`], with options: an rng seed, a timeout
    /// ([`Code::DeadlineExceeded`] once it has passed) and a [`Cancellation`]
    /// ([`Code::Cancelled`] once cancelled, or at once if it already is). Either
    /// stops even a `while` loop that never ends; the call then returns no
    /// results, and the executable, its client and `arguments` stay usable.
    /// Blocks the calling thread until the execution ends or stops.
    pub fn execute_with(&self, arguments: &[&Buffer<'c>], options: &ExecuteOptions<'_>) -> Result<Vec<Buffer<'c>>> {
        let args: Vec<_> = arguments.iter().map(|b| b.raw.as_ptr()).collect();
        self.launch(&args, &[], options, None)
    }

    /// As [`Executable::execute_with`], without waiting: returns the results at
    /// once (their shapes are known; reading one waits until it is ready) and
    /// an [`Event`] that becomes ready when the execution ends. Executions
    /// chain: a result may be passed to the next call at once, which starts
    /// when its arguments are ready. Errors in the arguments are returned at
    /// once; a failure while running (a timeout, a cancellation, a failed
    /// argument) shows in the event, in every result's
    /// [`Buffer::ready_event`] and when a result is read.
    ///
    /// The execution keeps what it needs: the executable, the arguments and
    /// the options' cancellation may be dropped while it runs.
    pub fn execute_async(
        &self,
        arguments: &[&Buffer<'c>],
        options: &ExecuteOptions<'_>,
    ) -> Result<(Vec<Buffer<'c>>, Event)> {
        let args: Vec<_> = arguments.iter().map(|b| b.raw.as_ptr()).collect();
        let mut event = ptr::null_mut();
        let results = self.launch(&args, &[], options, Some(&mut event))?;
        // SAFETY: a successful call hands over an owned event.
        Ok((results, unsafe { Event::from_raw(event) }))
    }

    /// As [`Executable::execute_with`], where the [`Argument::Donated`] ones are
    /// given to the execution (XLA's `donate_argnums`): it takes them over and
    /// frees their memory as soon as it no longer needs them. They are consumed
    /// even when the call fails.
    ///
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// # let b = kiln::Builder::new("double")?;
    /// # let x = b.parameter(0, kiln::ElementType::F32, &[2], "x");
    /// # let computation = b.build(b.add(x, x))?;
    /// use kiln::Argument;
    /// let client = kiln::Client::new()?;
    /// let exe = client.compile(&computation)?;
    /// let x = client.buffer_from_slice(&[1.0f32, 2.0], &[2])?;
    /// let out = exe.execute_donating(vec![Argument::Donated(x)], &Default::default())?;
    /// assert_eq!(out[0].to_vec::<f32>()?, [2.0, 4.0]);
    /// # Ok(())
    /// # }
    /// ```
    /// A donated buffer cannot be used afterwards:
    /// ```compile_fail
    /// # fn main() -> kiln::Result<()> {
    /// # let b = kiln::Builder::new("double")?;
    /// # let x = b.parameter(0, kiln::ElementType::F32, &[2], "x");
    /// # let computation = b.build(b.add(x, x))?;
    /// let client = kiln::Client::new()?;
    /// let exe = client.compile(&computation)?;
    /// let x = client.buffer_from_slice(&[1.0f32, 2.0], &[2])?;
    /// let out = exe.execute_donating(vec![kiln::Argument::Donated(x)], &Default::default())?;
    /// x.to_vec::<f32>()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn execute_donating(
        &self,
        arguments: Vec<Argument<'_, 'c>>,
        options: &ExecuteOptions<'_>,
    ) -> Result<Vec<Buffer<'c>>> {
        let (args, donated) = Argument::split(&arguments);
        self.launch(&args, &donated, options, None)
        // `arguments` drops here: a donated handle may (only) be destroyed.
    }

    /// [`Executable::execute_async`] with donation, as
    /// [`Executable::execute_donating`].
    pub fn execute_async_donating(
        &self,
        arguments: Vec<Argument<'_, 'c>>,
        options: &ExecuteOptions<'_>,
    ) -> Result<(Vec<Buffer<'c>>, Event)> {
        let (args, donated) = Argument::split(&arguments);
        let mut event = ptr::null_mut();
        let results = self.launch(&args, &donated, options, Some(&mut event))?;
        // SAFETY: a successful call hands over an owned event.
        Ok((results, unsafe { Event::from_raw(event) }))
    }

    /// Runs `args`, donating the indices `donated`; asynchronously when `event`
    /// is given (it receives the completion event).
    fn launch(
        &self,
        args: &[*mut sys::kiln_buffer_t],
        donated: &[usize],
        options: &ExecuteOptions<'_>,
        event: Option<&mut *mut sys::kiln_event_t>,
    ) -> Result<Vec<Buffer<'c>>> {
        let opts = sys::kiln_execute_options_t {
            donated_arguments: opt_ptr(donated),
            num_donated_arguments: donated.len(),
            ..options.c_struct()?
        };
        let mut results = vec![ptr::null_mut(); self.results];
        let mut n = 0;
        // SAFETY: every pointer is valid for its stated length during the call.
        check(unsafe {
            match event {
                None => sys::kiln_executable_execute(
                    self.raw.as_ptr(),
                    opt_ptr(args),
                    args.len(),
                    &opts,
                    results.as_mut_ptr(),
                    results.len(),
                    &mut n,
                ),
                Some(event) => sys::kiln_executable_execute_async(
                    self.raw.as_ptr(),
                    opt_ptr(args),
                    args.len(),
                    &opts,
                    results.as_mut_ptr(),
                    results.len(),
                    &mut n,
                    event,
                ),
            }
        })?;
        // SAFETY: the first n entries are owned result buffers of this client.
        Ok(results[..n].iter().map(|&r| unsafe { Buffer::from_raw(r) }).collect())
    }
}

/// An argument of [`Executable::execute_donating`]: a borrowed buffer, or one
/// given to the execution. `From` makes either from `&Buffer` or `Buffer`.
#[derive(Debug)]
pub enum Argument<'a, 'c> {
    /// Only read, as by [`Executable::execute_with`].
    Borrowed(&'a Buffer<'c>),
    /// Taken over by the execution, which frees its memory as soon as it no
    /// longer needs it.
    Donated(Buffer<'c>),
}

impl<'a, 'c> From<&'a Buffer<'c>> for Argument<'a, 'c> {
    fn from(buffer: &'a Buffer<'c>) -> Self {
        Argument::Borrowed(buffer)
    }
}

impl<'c> From<Buffer<'c>> for Argument<'_, 'c> {
    fn from(buffer: Buffer<'c>) -> Self {
        Argument::Donated(buffer)
    }
}

impl Argument<'_, '_> {
    /// The raw handles, and the indices of the donated ones.
    fn split(arguments: &[Self]) -> (Vec<*mut sys::kiln_buffer_t>, Vec<usize>) {
        let args = arguments
            .iter()
            .map(|a| match a {
                Argument::Borrowed(b) => b.as_raw(),
                Argument::Donated(b) => b.as_raw(),
            })
            .collect();
        let donated = arguments.iter().enumerate().filter(|(_, a)| matches!(a, Argument::Donated(_))).map(|(i, _)| i);
        (args, donated.collect())
    }
}

impl Drop for Executable<'_> {
    fn drop(&mut self) {
        unsafe { sys::kiln_executable_destroy(self.raw.as_ptr()) }
    }
}

/// A slice's pointer, NULL when empty (kiln.h allows NULL with a zero count).
pub(crate) fn opt_ptr<T>(s: &[T]) -> *const T {
    if s.is_empty() {
        ptr::null()
    } else {
        s.as_ptr()
    }
}

pub(crate) fn path_cstring(path: &Path) -> Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::new(Code::InvalidArgument, format!("path contains a NUL byte: {}", path.display())))
}
