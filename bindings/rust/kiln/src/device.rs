//! Devices of a client, and host memory that buffers may read in place.

use std::alloc::{self, Layout};
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

use kiln_sys as sys;

use crate::client::opt_ptr;
use crate::error::{borrowed_str, check, Result};
use crate::types::{Element, ElementType};
use crate::{Buffer, Client};

/// A device of a [`Client`]: where buffers live and executables run. A cheap
/// `Copy` handle owned by the library and borrowed from the client; equal
/// devices compare equal. Get them with [`Client::devices`] or
/// [`Client::device`]. Thread-safe (`Send + Sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device<'c> {
    raw: NonNull<sys::kiln_device_t>,
    _client: PhantomData<&'c Client>,
}

// SAFETY: kiln.h: device handles are thread-safe and owned by the library.
unsafe impl Send for Device<'_> {}
unsafe impl Sync for Device<'_> {}

impl<'c> Device<'c> {
    /// # Safety
    /// `raw` must be a non-NULL device handle of the client `'c` borrows.
    pub(crate) unsafe fn from_raw(raw: *mut sys::kiln_device_t) -> Device<'c> {
        Device { raw: NonNull::new(raw).expect("NULL device"), _client: PhantomData }
    }

    /// The raw handle, for use with `kiln-sys`. Owned by the library.
    pub fn as_raw(&self) -> *mut sys::kiln_device_t {
        self.raw.as_ptr()
    }

    /// The device's position in its client's list (what [`Client::device`] takes).
    pub fn index(&self) -> Result<usize> {
        let mut index = 0;
        check(unsafe { sys::kiln_device_index(self.raw.as_ptr(), &mut index) })?;
        Ok(index)
    }

    /// The device's description, as [`Client::device_description`] gives it.
    pub fn description(&self) -> Result<&'c str> {
        let mut d = ptr::null();
        // SAFETY: the string lives as long as the device handle, which lives as
        // long as the client borrowed for 'c.
        unsafe {
            check(sys::kiln_device_description(self.raw.as_ptr(), &mut d))?;
            Ok(borrowed_str(d))
        }
    }

    /// Copies `data` (row-major, `dims` shape) into a new buffer on this device.
    pub fn buffer_from_slice<T: Element>(&self, data: &[T], dims: &[i64]) -> Result<Buffer<'c>> {
        // SAFETY: T is a plain element type; viewing it as bytes is sound.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
        self.buffer_with_layout(T::TYPE, dims, None, bytes)
    }

    /// Copies raw row-major bytes of any array element type into a new buffer
    /// on this device.
    pub fn buffer_from_bytes(&self, element_type: ElementType, dims: &[i64], bytes: &[u8]) -> Result<Buffer<'c>> {
        self.buffer_with_layout(element_type, dims, None, bytes)
    }

    /// As [`Device::buffer_from_bytes`], with a device layout (`minor_to_major`).
    pub fn buffer_with_layout(
        &self,
        element_type: ElementType,
        dims: &[i64],
        minor_to_major: Option<&[i64]>,
        bytes: &[u8],
    ) -> Result<Buffer<'c>> {
        let mut raw = ptr::null_mut();
        // SAFETY: every pointer is valid for the stated length during the call; the
        // data is copied before it returns.
        check(unsafe {
            sys::kiln_device_buffer_from_host(
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

    /// A buffer over host memory that it takes over, read in place where the
    /// device reads host memory directly: the "cpu" backend does for every
    /// element type but PRED (any `&[T]` is aligned to its element type,
    /// which is all it needs, so a plain `Vec` is read in place), and
    /// [`Buffer::is_host_alias`] then says so. Elsewhere (other backends,
    /// PRED) the data is copied and `data` dropped before this returns.
    ///
    /// `data` is dropped exactly once, on whatever thread the library releases
    /// it: once the buffer and every execution reading it are gone (or at once
    /// when the data was copied or the call fails).
    pub fn buffer_alias_host<A: HostArray>(&self, data: A, dims: &[i64]) -> Result<Buffer<'c>> {
        unsafe extern "C" fn release<A>(user_data: *mut c_void) {
            // SAFETY: the `Box<A>` leaked below; the library releases it once.
            drop(unsafe { Box::from_raw(user_data.cast::<A>()) });
        }

        let owner = Box::new(data);
        let slice = owner.as_slice();
        let (ptr, byte_size) = (slice.as_ptr().cast::<c_void>(), std::mem::size_of_val(slice));
        let user_data = Box::into_raw(owner);
        let mut raw = ptr::null_mut();
        // SAFETY: the memory stays allocated and unchanged until `release` drops
        // its owner (HostArray's contract); the library calls `release` exactly
        // once, also when it copied the data or the call fails.
        check(unsafe {
            sys::kiln_device_buffer_alias_host(
                self.raw.as_ptr(),
                A::Element::TYPE.raw(),
                opt_ptr(dims),
                dims.len(),
                ptr,
                byte_size,
                Some(release::<A>),
                user_data.cast(),
                &mut raw,
            )
        })?;
        Ok(unsafe { Buffer::from_raw(raw) })
    }
}

/// Host memory that [`Device::buffer_alias_host`] may read in place: an owner
/// of a slice of elements. Implemented for `Vec<T>`, `Box<[T]>` and
/// [`AlignedVec`]; the "cpu" backend reads each of them without a copy.
///
/// # Safety
/// `as_slice` must return the same slice every time it is called on a value,
/// and its elements must stay allocated and unchanged until the value is
/// dropped (it is not moved after the first call). The value is dropped on an
/// arbitrary thread (hence `Send`).
pub unsafe trait HostArray: Send + 'static {
    /// The element type.
    type Element: Element;
    /// The elements, row-major.
    fn as_slice(&self) -> &[Self::Element];
}

// SAFETY: a Vec's elements live on the heap and do not change without `&mut`.
unsafe impl<T: Element> HostArray for Vec<T> {
    type Element = T;
    fn as_slice(&self) -> &[T] {
        self
    }
}

// SAFETY: as for Vec.
unsafe impl<T: Element> HostArray for Box<[T]> {
    type Element = T;
    fn as_slice(&self) -> &[T] {
        self
    }
}

// SAFETY: as for Vec.
unsafe impl<T: Element> HostArray for AlignedVec<T> {
    type Element = T;
    fn as_slice(&self) -> &[T] {
        self
    }
}

/// A fixed-length heap array aligned to [`AlignedVec::ALIGNMENT`] (64) bytes
/// (a cache line, the alignment of Kiln's own cpu buffers). Derefs to a slice.
///
/// Not needed for zero-copy: the "cpu" backend reads any
/// element-aligned host memory in place (a `Vec` as well, see
/// [`Device::buffer_alias_host`]). Use it where 64-byte alignment matters to
/// you, e.g. for vector loads over the same memory.
pub struct AlignedVec<T: Element> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: it owns its elements, which are Send + Sync (Element).
unsafe impl<T: Element> Send for AlignedVec<T> {}
unsafe impl<T: Element> Sync for AlignedVec<T> {}

impl<T: Element> AlignedVec<T> {
    /// The alignment of the data, in bytes.
    pub const ALIGNMENT: usize = 64;

    fn layout(len: usize) -> Layout {
        let bytes = std::mem::size_of::<T>().checked_mul(len).expect("AlignedVec: size overflows usize");
        // At least one byte: the allocator takes no empty layouts.
        Layout::from_size_align(bytes.max(1), Self::ALIGNMENT).expect("AlignedVec: size overflows isize")
    }

    /// `len` zeros (`false` for `bool`).
    pub fn zeroed(len: usize) -> AlignedVec<T> {
        let layout = Self::layout(len);
        // SAFETY: non-empty layout; all-zero bytes are a valid value of every Element.
        let p = unsafe { alloc::alloc_zeroed(layout) }.cast::<T>();
        let ptr = NonNull::new(p).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedVec { ptr, len }
    }

    /// A copy of `data`.
    pub fn from_slice(data: &[T]) -> AlignedVec<T> {
        let mut v = Self::zeroed(data.len());
        v.copy_from_slice(data);
        v
    }
}

impl<T: Element> Deref for AlignedVec<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements at `ptr`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> DerefMut for AlignedVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for Deref, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> Drop for AlignedVec<T> {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr().cast(), Self::layout(self.len)) }
    }
}

impl<T: Element> Clone for AlignedVec<T> {
    fn clone(&self) -> Self {
        Self::from_slice(self)
    }
}

impl<T: Element + fmt::Debug> fmt::Debug for AlignedVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Element> From<&[T]> for AlignedVec<T> {
    fn from(data: &[T]) -> Self {
        Self::from_slice(data)
    }
}
