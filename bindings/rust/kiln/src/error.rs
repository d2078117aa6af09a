//! Errors: every fallible call returns `Result<T, kiln::Error>`.

use std::ffi::CStr;
use std::fmt;

use kiln_sys as sys;

/// The canonical status codes of `kiln.h` (`KILN_STATUS_*`), without `OK`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum Code {
    Cancelled = sys::KILN_STATUS_CANCELLED,
    /// Also what a code outside the known set maps to.
    Unknown = sys::KILN_STATUS_UNKNOWN,
    InvalidArgument = sys::KILN_STATUS_INVALID_ARGUMENT,
    DeadlineExceeded = sys::KILN_STATUS_DEADLINE_EXCEEDED,
    NotFound = sys::KILN_STATUS_NOT_FOUND,
    AlreadyExists = sys::KILN_STATUS_ALREADY_EXISTS,
    PermissionDenied = sys::KILN_STATUS_PERMISSION_DENIED,
    ResourceExhausted = sys::KILN_STATUS_RESOURCE_EXHAUSTED,
    FailedPrecondition = sys::KILN_STATUS_FAILED_PRECONDITION,
    Aborted = sys::KILN_STATUS_ABORTED,
    OutOfRange = sys::KILN_STATUS_OUT_OF_RANGE,
    Unimplemented = sys::KILN_STATUS_UNIMPLEMENTED,
    Internal = sys::KILN_STATUS_INTERNAL,
    Unavailable = sys::KILN_STATUS_UNAVAILABLE,
    DataLoss = sys::KILN_STATUS_DATA_LOSS,
}

impl Code {
    /// The code for a raw `kiln_status_code_t`; values outside the set (and OK)
    /// become [`Code::Unknown`].
    pub fn from_raw(raw: i32) -> Code {
        use Code::*;
        match raw {
            sys::KILN_STATUS_CANCELLED => Cancelled,
            sys::KILN_STATUS_INVALID_ARGUMENT => InvalidArgument,
            sys::KILN_STATUS_DEADLINE_EXCEEDED => DeadlineExceeded,
            sys::KILN_STATUS_NOT_FOUND => NotFound,
            sys::KILN_STATUS_ALREADY_EXISTS => AlreadyExists,
            sys::KILN_STATUS_PERMISSION_DENIED => PermissionDenied,
            sys::KILN_STATUS_RESOURCE_EXHAUSTED => ResourceExhausted,
            sys::KILN_STATUS_FAILED_PRECONDITION => FailedPrecondition,
            sys::KILN_STATUS_ABORTED => Aborted,
            sys::KILN_STATUS_OUT_OF_RANGE => OutOfRange,
            sys::KILN_STATUS_UNIMPLEMENTED => Unimplemented,
            sys::KILN_STATUS_INTERNAL => Internal,
            sys::KILN_STATUS_UNAVAILABLE => Unavailable,
            sys::KILN_STATUS_DATA_LOSS => DataLoss,
            _ => Unknown,
        }
    }

    /// The numeric value (`KILN_STATUS_*`).
    pub fn raw(self) -> i32 {
        self as i32
    }

    /// The upper-case name, e.g. `"INVALID_ARGUMENT"`.
    pub fn name(self) -> &'static str {
        // SAFETY: the library returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(sys::kiln_status_code_name(self.raw())) }.to_str().unwrap_or("UNKNOWN_CODE")
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed Kiln call: the status code and the library's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
}

/// `Result<T, kiln::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    /// The status code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The message, as the library wrote it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

/// Turns a returned status into a `Result`, freeing the status.
pub(crate) fn check(status: *mut sys::kiln_status_t) -> Result<()> {
    if status.is_null() {
        return Ok(());
    }
    // SAFETY: a non-NULL status returned by the library is ours to read and free.
    unsafe {
        let code = Code::from_raw(sys::kiln_status_code(status));
        let message = CStr::from_ptr(sys::kiln_status_message(status)).to_string_lossy().into_owned();
        sys::kiln_status_destroy(status);
        Err(Error::new(code, message))
    }
}

/// The outcome a borrowed status stands for (NULL: success), copied; the status
/// is left to its owner.
///
/// # Safety
/// `status` must be NULL or a valid status for the duration of the call.
pub(crate) unsafe fn status_result(status: *const sys::kiln_status_t) -> Result<()> {
    if status.is_null() {
        return Ok(());
    }
    let code = Code::from_raw(sys::kiln_status_code(status));
    let message = CStr::from_ptr(sys::kiln_status_message(status)).to_string_lossy().into_owned();
    Err(Error::new(code, message))
}

/// A `CString` for a string argument; an inner NUL is INVALID_ARGUMENT.
pub(crate) fn c_string(what: &str, s: &str) -> Result<std::ffi::CString> {
    std::ffi::CString::new(s)
        .map_err(|_| Error::new(Code::InvalidArgument, format!("{what} contains a NUL byte: {s:?}")))
}

/// Reads a library-owned string.
///
/// # Safety
/// `p` must be a valid NUL-terminated string living at least as long as `'a`.
pub(crate) unsafe fn borrowed_str<'a>(p: *const std::ffi::c_char) -> &'a str {
    CStr::from_ptr(p).to_str().unwrap_or("<invalid UTF-8>")
}
