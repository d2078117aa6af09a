//! Safetensors files (Hugging Face's format for weights), read and written by
//! libkiln (`kiln_safetensors_*` in `kiln.h`): the library parses and checks
//! them, this module marshals.
//!
//! ```
//! use kiln::safetensors::{self, SafetensorsFile};
//!
//! # fn main() -> kiln::Result<()> {
//! let client = kiln::Client::new()?;
//! let path = std::env::temp_dir().join(format!("kiln-doc-{}.safetensors", std::process::id()));
//! let w = client.buffer_from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! safetensors::save(&path, &[("w", &w)], &[("format", "pt")])?;
//!
//! let file = SafetensorsFile::open(&path)?;
//! assert_eq!(file.names(), ["w"]);
//! assert_eq!(file.metadata("format")?, Some("pt"));
//! let back = file.read("w", &client.device(0)?)?;
//! assert_eq!(back.to_vec::<f32>()?, [1.0, 2.0, 3.0, 4.0]);
//! # std::fs::remove_file(&path).unwrap();
//! # Ok(())
//! # }
//! ```
//!
//! Errors carry the library's code and message: a malformed file is
//! [`Code::InvalidArgument`] (bad JSON, an unknown dtype, overlapping ranges,
//! ...) or [`Code::DataLoss`] (truncated); a missing file or an unknown tensor
//! name [`Code::NotFound`]. dtypes: BOOL, U8..U64, I8..I64, F16, BF16, F32,
//! F64, C64 (C128 cannot be written).
//!
//! A file may move to another thread but not be shared (`Send`, not `Sync`):
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<kiln::SafetensorsFile>();
//! ```
//! and a buffer read from it cannot outlive the client of its device:
//! ```compile_fail
//! # fn f(file: &kiln::SafetensorsFile) {
//! let buffer = {
//!     let client = kiln::Client::new().unwrap();
//!     file.read("w", &client.device(0).unwrap()).unwrap()
//! };
//! # }
//! ```

use std::ffi::{c_char, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use kiln_sys as sys;

use crate::client::path_cstring;
use crate::error::{borrowed_str, c_string, check, Code, Result};
use crate::{Buffer, Device};

/// A safetensors file opened for reading: its header was read and checked
/// once by [`SafetensorsFile::open`]; tensors are read by name into new
/// buffers. Freed on `Drop` (buffers read from it stay valid).
pub struct SafetensorsFile {
    raw: NonNull<sys::kiln_safetensors_t>,
    path: PathBuf,
    names: Vec<String>,
}

// SAFETY: kiln.h: "use one from one thread at a time"; moving it is fine, and
// without Sync no two threads reach it at once.
unsafe impl Send for SafetensorsFile {}

impl SafetensorsFile {
    /// Opens `path` and checks its header: [`Code::NotFound`] when it cannot
    /// be opened, [`Code::InvalidArgument`] for a malformed header,
    /// [`Code::DataLoss`] for a truncated file.
    pub fn open(path: impl AsRef<Path>) -> Result<SafetensorsFile> {
        let path = path.as_ref();
        let c_path = path_cstring(path)?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::kiln_safetensors_open(c_path.as_ptr(), &mut raw) })?;
        let mut file = SafetensorsFile {
            raw: NonNull::new(raw).expect("NULL safetensors file"),
            path: path.to_path_buf(),
            names: Vec::new(),
        };
        let mut count = 0;
        check(unsafe { sys::kiln_safetensors_tensor_count(file.raw.as_ptr(), &mut count) })?;
        for index in 0..count {
            let mut name = ptr::null();
            check(unsafe { sys::kiln_safetensors_tensor_name(file.raw.as_ptr(), index, &mut name) })?;
            // SAFETY: the string lives as long as the file; it is copied now.
            let name = unsafe { borrowed_str(name) }.to_owned();
            file.names.push(name);
        }
        Ok(file)
    }

    /// The raw handle, for use with `kiln-sys`. Owned by `self`.
    pub fn as_raw(&self) -> *mut sys::kiln_safetensors_t {
        self.raw.as_ptr()
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tensors' names, in the order of their data in the file.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of tensors.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the file holds no tensors.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether the file holds a tensor named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// The value of metadata entry `key` (the header's `"__metadata__"`),
    /// `None` when the file has none by that name.
    pub fn metadata(&self, key: &str) -> Result<Option<&str>> {
        let key = c_string("metadata key", key)?;
        let mut value = ptr::null();
        match check(unsafe { sys::kiln_safetensors_metadata(self.raw.as_ptr(), key.as_ptr(), &mut value) }) {
            // SAFETY: the string lives as long as the file, which `&self` borrows.
            Ok(()) => Ok(Some(unsafe { borrowed_str(value) })),
            Err(e) if e.code() == Code::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads tensor `name` into a new buffer on `device`. [`Code::NotFound`],
    /// listing the file's tensors, for an unknown name.
    pub fn read<'c>(&self, name: &str, device: &Device<'c>) -> Result<Buffer<'c>> {
        let name = c_string("tensor name", name)?;
        let mut raw = ptr::null_mut();
        // SAFETY: kiln_safetensors_read takes a mutable file; `self` is not
        // Sync, so no other thread uses it meanwhile.
        check(unsafe { sys::kiln_safetensors_read(self.raw.as_ptr(), device.as_raw(), name.as_ptr(), &mut raw) })?;
        // SAFETY: an owned buffer on a device of the client borrowed for 'c.
        Ok(unsafe { Buffer::from_raw(raw) })
    }

    /// Reads every tensor, in the order of [`names`](Self::names), onto `device`.
    pub fn read_all<'c>(&self, device: &Device<'c>) -> Result<Vec<(String, Buffer<'c>)>> {
        self.names.iter().map(|name| Ok((name.clone(), self.read(name, device)?))).collect()
    }
}

impl Drop for SafetensorsFile {
    fn drop(&mut self) {
        unsafe { sys::kiln_safetensors_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for SafetensorsFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SafetensorsFile").field("path", &self.path).field("names", &self.names).finish()
    }
}

/// Every tensor of the safetensors file at `path`, in the order of their data,
/// on `device` (see [`SafetensorsFile::read`]).
pub fn load<'c>(path: impl AsRef<Path>, device: &Device<'c>) -> Result<Vec<(String, Buffer<'c>)>> {
    SafetensorsFile::open(path)?.read_all(device)
}

/// Writes `tensors` (name, buffer; data in that order, each buffer once it is
/// ready) to `path` as a safetensors file, with `metadata` (key, value) as its
/// `"__metadata__"`. [`Code::InvalidArgument`] for a name given twice or
/// `"__metadata__"`, or an element type the format lacks (C128);
/// [`Code::NotFound`] when the file cannot be created.
pub fn save(path: impl AsRef<Path>, tensors: &[(&str, &Buffer<'_>)], metadata: &[(&str, &str)]) -> Result<()> {
    let path = path_cstring(path.as_ref())?;
    let names = tensors.iter().map(|(name, _)| c_string("tensor name", name)).collect::<Result<Vec<_>>>()?;
    let keys = metadata.iter().map(|(key, _)| c_string("metadata key", key)).collect::<Result<Vec<_>>>()?;
    let values = metadata.iter().map(|(_, value)| c_string("metadata value", value)).collect::<Result<Vec<_>>>()?;
    let pointers = |strings: &[CString]| strings.iter().map(|s| s.as_ptr()).collect::<Vec<*const c_char>>();
    let (names, keys, values) = (pointers(&names), pointers(&keys), pointers(&values));
    let buffers: Vec<*mut sys::kiln_buffer_t> = tensors.iter().map(|(_, buffer)| buffer.as_raw()).collect();
    // SAFETY: every array holds its stated count of valid pointers for the call
    // (the CStrings and buffers outlive it); the library only reads them.
    check(unsafe {
        sys::kiln_safetensors_write_file(
            path.as_ptr(),
            names.as_ptr(),
            buffers.as_ptr(),
            buffers.len(),
            keys.as_ptr(),
            values.as_ptr(),
            keys.len(),
        )
    })
}
