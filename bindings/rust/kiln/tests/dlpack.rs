//! DLPack exchange: export hands out the buffer's own host memory (checked by
//! pointer equality), the tensor outlives its buffer and client, import of a
//! foreign tensor is zero-copy on cpu and deletes it exactly once on every
//! path, refusals, the legacy struct, and the interpreter's copies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kiln::sys;
use kiln::{Builder, Client, ClientOptions, Code, DlpackTensor, ElementType, Executable, ExecuteOptions, HostArray};

mod foreign;
use foreign::Foreign;

const VALUES: [f32; 6] = [0.0, 10.0, 20.0, 30.0, 40.0, 50.0];

fn client(backend: &str) -> Client {
    Client::with_options(&ClientOptions { backend: Some(backend), num_devices: 1 }).unwrap()
}

/// x + 1 over f32[2,3].
fn add_one(client: &Client) -> Executable<'_> {
    let b = Builder::new("add_one").unwrap();
    let x = b.parameter(0, ElementType::F32, &[2, 3], "x");
    let one = b.constant_scalar(1.0f32);
    client.compile(&b.build(b.add(x, b.broadcast(one, &[2, 3]))).unwrap()).unwrap()
}

/// Host data that counts how often it is dropped.
struct Counted {
    data: Vec<f32>,
    drops: Arc<AtomicUsize>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: `data` is never changed and lives as long as the value.
unsafe impl HostArray for Counted {
    type Element = f32;
    fn as_slice(&self) -> &[f32] {
        &self.data
    }
}

fn counted(data: &[f32]) -> (Counted, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    (Counted { data: data.to_vec(), drops: Arc::clone(&drops) }, drops)
}

/// Makes a [`Foreign`] tensor one that import must refuse.
type Spoil = fn(&mut Foreign);

fn check_metadata<M: kiln::ManagedTensor>(t: &DlpackTensor<M>) {
    assert_eq!(t.device(), sys::DLDevice { device_type: sys::kDLCPU, device_id: 0 });
    assert_eq!(t.dtype(), sys::DLDataType { code: sys::kDLFloat, bits: 32, lanes: 1 });
    assert_eq!(t.element_type(), Some(ElementType::F32));
    assert_eq!(t.shape(), [2, 3]);
    assert_eq!(t.strides(), Some(&[3i64, 1][..]));
    assert_eq!(t.dl_tensor().byte_offset, 0);
}

#[test]
fn cpu_export_hands_out_the_buffers_own_memory() {
    let c = client("cpu");
    let data = VALUES.to_vec();
    let at = data.as_ptr();
    let x = c.device(0).unwrap().buffer_alias_host(data, &[2, 3]).unwrap();
    assert!(x.is_host_alias().unwrap());

    let t = x.to_dlpack_versioned().unwrap();
    assert_eq!(t.data_ptr(), at.cast(), "the tensor points at the memory the buffer was made over");
    let version = t.version().unwrap();
    assert_eq!((version.major, version.minor), (1, 0));
    assert!(t.is_read_only());
    assert!(!t.is_copied(), "flags {:#x}", t.flags());
    assert_eq!(t.flags(), sys::DLPACK_FLAG_BITMASK_READ_ONLY);
    check_metadata(&t);
    assert_eq!(t.as_slice::<f32>().unwrap(), VALUES);
    assert_eq!(t.as_slice::<i32>().unwrap_err().code(), Code::InvalidArgument);

    let legacy = x.to_dlpack().unwrap();
    assert_eq!(legacy.data_ptr(), at.cast());
    assert!(legacy.version().is_none());
    assert_eq!(legacy.flags(), 0);
    check_metadata(&legacy);

    // A buffer the library made: both exports share its memory.
    let y = c.buffer_from_slice(&VALUES, &[2, 3]).unwrap();
    let (a, b) = (y.to_dlpack_versioned().unwrap(), y.to_dlpack().unwrap());
    assert_eq!(a.data_ptr(), b.data_ptr());
    assert!(!a.is_copied());
    assert!(format!("{a:?}").contains("shape: [2, 3]"));
}

#[test]
fn an_exported_tensor_outlives_its_buffer_and_client() {
    for backend in ["cpu", "interpreter"] {
        let c = client(backend);
        let x = c.buffer_from_slice(&VALUES, &[2, 3]).unwrap();
        let versioned = x.to_dlpack_versioned().unwrap();
        let legacy = x.to_dlpack().unwrap();
        drop(x);
        drop(c);
        assert_eq!(versioned.as_slice::<f32>().unwrap(), VALUES, "{backend}");
        assert_eq!(legacy.as_slice::<f32>().unwrap(), VALUES, "{backend}");
        assert!(!versioned.is_copied(), "{backend}: a host backend hands out its own memory");
        assert!(versioned.is_read_only());
    }

    // Host memory lent to a buffer is kept until the tensor is deleted, by
    // Drop or by a consumer given the raw pointer.
    let c = client("cpu");
    let (data, drops) = counted(&VALUES);
    let x = c.device(0).unwrap().buffer_alias_host(data, &[2, 3]).unwrap();
    let kept = x.to_dlpack_versioned().unwrap();
    let handed_on = x.to_dlpack().unwrap().into_raw();
    drop(x);
    drop(c);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(kept.as_slice::<f32>().unwrap(), VALUES);
    drop(kept);
    assert_eq!(drops.load(Ordering::SeqCst), 0, "the legacy tensor still reads it");
    unsafe {
        assert_eq!(std::slice::from_raw_parts((*handed_on).dl_tensor.data.cast::<f32>(), 6), VALUES);
        ((*handed_on).deleter.unwrap())(handed_on);
    }
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn cpu_import_reads_a_foreign_tensor_in_place_and_deletes_it_once() {
    let c = client("cpu");
    let device = c.device(0).unwrap();
    let mut foreign = Foreign::host(&VALUES);
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert!(x.is_host_alias().unwrap());
    assert_eq!(foreign.deletions(), 0);
    assert_eq!(x.shape().unwrap(), kiln::Shape::new(ElementType::F32, &[2, 3]));
    assert_eq!(x.to_vec::<f32>().unwrap(), VALUES);

    // Exported again: the very memory of the Vec.
    let back = x.to_dlpack_versioned().unwrap();
    assert_eq!(back.data_ptr(), foreign.data_ptr());

    // Computed on in place.
    let out = add_one(&c).execute(&[&x]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), VALUES.map(|v| v + 1.0));
    drop(x);
    assert_eq!(foreign.deletions(), 0, "the exported tensor still reads it");
    drop(back);
    assert_eq!(foreign.deletions(), 1, "deleted once the buffer and the export are gone");
    drop(out);
    assert_eq!(foreign.deletions(), 1);

    // Without an export in between: deleted when the buffer is dropped.
    let mut foreign = Foreign::host(&VALUES);
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert_eq!(foreign.deletions(), 0);
    drop(x);
    assert_eq!(foreign.deletions(), 1);

    // NULL strides are row-major; size-1 dimensions may carry any stride.
    let mut foreign = Foreign::host(&VALUES);
    foreign.versioned.dl_tensor.strides = std::ptr::null_mut();
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert_eq!(x.to_dlpack_versioned().unwrap().data_ptr(), foreign.data_ptr());
    drop(x);
    assert_eq!(foreign.deletions(), 1);
    let mut foreign = Foreign::host(&VALUES);
    foreign.shape = [1, 6];
    foreign.strides = [99, 1];
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert_eq!(x.dims().unwrap(), [1, 6]);
    drop(x);
    assert_eq!(foreign.deletions(), 1);
}

#[test]
fn refused_imports_give_invalid_argument_and_delete_once() {
    let c = client("cpu");
    let device = c.device(0).unwrap();
    let cases: [(&str, Spoil); 5] = [
        ("major version 2", |f| f.versioned.version.major = 2),
        ("transposed strides", |f| f.strides = [1, 2]),
        ("4 lanes", |f| f.versioned.dl_tensor.dtype.lanes = 4),
        ("CUDA memory", |f| f.versioned.dl_tensor.device.device_type = sys::kDLCUDA),
        ("24-bit floats", |f| f.versioned.dl_tensor.dtype.bits = 24),
    ];
    for (what, spoil) in cases {
        let mut foreign = Foreign::host(&VALUES);
        spoil(&mut foreign);
        let err = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{what}: {err}");
        assert_eq!(foreign.deletions(), 1, "{what}: the deleter runs once");
    }
    // The same through the legacy struct.
    let mut foreign = Foreign::host(&VALUES);
    foreign.strides = [1, 2];
    let err = unsafe { device.buffer_from_dlpack(&mut foreign.legacy) }.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_eq!(foreign.deletions(), 1);
    // NULL: nothing to delete.
    let err = unsafe { device.buffer_from_dlpack_versioned(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = unsafe { device.buffer_from_dlpack(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // No deleter is fine.
    let mut foreign = Foreign::host(&VALUES);
    foreign.versioned.deleter = None;
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), VALUES);
    drop(x);
    assert_eq!(foreign.deletions(), 0);
}

#[test]
fn legacy_import_and_export_work() {
    let c = client("cpu");
    let device = c.device(0).unwrap();
    let mut foreign = Foreign::host(&VALUES);
    // The first element reached through a byte offset.
    foreign.legacy.dl_tensor.data = foreign.data.as_mut_ptr().cast::<u8>().wrapping_sub(8).cast();
    foreign.legacy.dl_tensor.byte_offset = 8;
    let x = unsafe { device.buffer_from_dlpack(&mut foreign.legacy) }.unwrap();
    assert!(x.is_host_alias().unwrap());
    assert_eq!(x.to_vec::<f32>().unwrap(), VALUES);
    let legacy = x.to_dlpack().unwrap();
    assert_eq!(legacy.data_ptr(), foreign.data_ptr());
    assert_eq!(legacy.as_slice::<f32>().unwrap(), VALUES);
    drop(x);
    assert_eq!(foreign.deletions(), 0);
    drop(legacy);
    assert_eq!(foreign.deletions(), 1);

    // A legacy export imported again (as another framework would pass it on).
    let y = c.buffer_from_slice(&VALUES, &[2, 3]).unwrap();
    let exported = y.to_dlpack().unwrap();
    let at = exported.data_ptr();
    let z = device.buffer_from_dlpack_tensor(exported).unwrap();
    assert!(z.is_host_alias().unwrap());
    assert_eq!(z.to_dlpack().unwrap().data_ptr(), at);
    assert_eq!(z.to_vec::<f32>().unwrap(), VALUES);
}

#[test]
fn the_interpreter_copies_on_import() {
    let c = client("interpreter");
    let device = c.device(0).unwrap();
    let mut foreign = Foreign::host(&VALUES);
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert_eq!(foreign.deletions(), 1, "copied: deleted before the call returns");
    assert!(!x.is_host_alias().unwrap());
    foreign.data.fill(-1.0);
    assert_eq!(x.to_vec::<f32>().unwrap(), VALUES);
    let t = x.to_dlpack_versioned().unwrap();
    assert_ne!(t.data_ptr(), foreign.data_ptr());
    assert!(!t.is_copied(), "the interpreter's own memory is host memory");
    assert_eq!(t.data_ptr(), x.to_dlpack().unwrap().data_ptr());
    assert_eq!(add_one(&c).execute(&[&x]).unwrap()[0].to_vec::<f32>().unwrap(), VALUES.map(|v| v + 1.0));
}

#[test]
fn tensors_move_between_clients_without_a_copy() {
    let interpreter = client("interpreter");
    let cpu = client("cpu");
    let x = interpreter.buffer_from_slice(&VALUES, &[2, 3]).unwrap();
    let t = x.to_dlpack_versioned().unwrap();
    let at = t.data_ptr();
    let y = cpu.device(0).unwrap().buffer_from_dlpack_tensor(t).unwrap();
    drop(x);
    drop(interpreter);
    assert!(y.is_host_alias().unwrap());
    assert_eq!(y.to_dlpack_versioned().unwrap().data_ptr(), at);
    assert_eq!(add_one(&cpu).execute(&[&y]).unwrap()[0].to_vec::<f32>().unwrap(), VALUES.map(|v| v + 1.0));
}

#[test]
fn dtypes_map_both_ways() {
    let c = client("cpu");
    let flags = c.buffer_from_slice(&[true, false, true], &[3]).unwrap();
    let t = flags.to_dlpack_versioned().unwrap();
    assert_eq!(t.dtype(), sys::DLDataType { code: sys::kDLBool, bits: 8, lanes: 1 });
    assert_eq!(t.as_slice::<bool>().unwrap(), [true, false, true]);
    let cases = [
        (ElementType::BF16, sys::kDLBfloat, 16),
        (ElementType::F16, sys::kDLFloat, 16),
        (ElementType::C64, sys::kDLComplex, 64),
        (ElementType::C128, sys::kDLComplex, 128),
        (ElementType::S8, sys::kDLInt, 8),
        (ElementType::U64, sys::kDLUInt, 64),
    ];
    for (element_type, code, bits) in cases {
        let bytes = vec![0u8; element_type.byte_width() * 2];
        let b = c.buffer_from_bytes(element_type, &[2], &bytes).unwrap();
        let t = b.to_dlpack_versioned().unwrap();
        assert_eq!(t.dtype(), sys::DLDataType { code, bits, lanes: 1 }, "{element_type}");
        assert_eq!(t.element_type(), Some(element_type));
        // And back: the same type and memory.
        let at = t.data_ptr();
        let back = c.device(0).unwrap().buffer_from_dlpack_tensor(t).unwrap();
        assert_eq!(back.element_type().unwrap(), element_type);
        assert_eq!(back.to_dlpack_versioned().unwrap().data_ptr(), at, "{element_type}");
    }
    // A scalar: no dimensions.
    let s = c.buffer_from_slice(&[7i64], &[]).unwrap().to_dlpack_versioned().unwrap();
    assert!(s.shape().is_empty());
    assert_eq!(s.as_slice::<i64>().unwrap(), [7]);
}

#[test]
fn export_of_a_non_default_layout_is_row_major() {
    for backend in ["cpu", "interpreter"] {
        let c = client(backend);
        let bytes: Vec<u8> = VALUES.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let x = c.buffer_with_layout(ElementType::F32, &[2, 3], Some(&[0, 1]), &bytes).unwrap();
        assert_eq!(x.to_vec::<f32>().unwrap(), VALUES, "{backend}");
        let t = x.to_dlpack_versioned().unwrap();
        assert_eq!(t.strides(), Some(&[3i64, 1][..]));
        assert_eq!(t.as_slice::<f32>().unwrap(), VALUES, "{backend}: the strides say row-major");
    }
}

#[test]
fn export_waits_for_the_buffer_and_reports_its_failure() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/count_to.hlo")).unwrap();
    let c = client("cpu");
    let exe = c.compile(&kiln::Computation::from_hlo_text(&text).unwrap()).unwrap();
    let n = c.buffer_from_slice(&[1000i64], &[]).unwrap();
    let (out, _) = exe.execute_async(&[&n], &ExecuteOptions::default()).unwrap();
    assert_eq!(out[0].to_dlpack_versioned().unwrap().as_slice::<i64>().unwrap(), [1000]);
    let endless = c.buffer_from_slice(&[-1i64], &[]).unwrap();
    let options = ExecuteOptions::default().with_timeout(Duration::from_millis(100));
    let (out, _) = exe.execute_async(&[&endless], &options).unwrap();
    assert_eq!(out[0].to_dlpack_versioned().unwrap_err().code(), Code::DeadlineExceeded);
    assert_eq!(out[0].to_dlpack().unwrap_err().code(), Code::DeadlineExceeded);
}

#[test]
fn cpu_import_copies_data_off_its_element_alignment_and_takes_edge_shapes() {
    let c = client("cpu");
    let device = c.device(0).unwrap();
    // f32 elements from byte 1 of the Vec (DLPack says so with byte_offset):
    // copied, and deleted before the call returns.
    let mut foreign = Foreign::host(&VALUES);
    let mut bytes = [0u8; 24];
    for (i, v) in VALUES[..5].iter().enumerate() {
        bytes[1 + 4 * i..5 + 4 * i].copy_from_slice(&v.to_ne_bytes());
    }
    for (d, b) in foreign.data.iter_mut().zip(bytes.chunks(4)) {
        *d = f32::from_ne_bytes(b.try_into().unwrap());
    }
    foreign.versioned.dl_tensor.byte_offset = 1;
    foreign.shape = [1, 5];
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert!(!x.is_host_alias().unwrap());
    assert_eq!(foreign.deletions(), 1);
    foreign.data.fill(-1.0);
    assert_eq!(x.to_vec::<f32>().unwrap(), VALUES[..5]);

    // Pinned CUDA host memory is host memory: read in place.
    let mut foreign = Foreign::host(&VALUES);
    foreign.versioned.dl_tensor.device.device_type = sys::kDLCUDAHost;
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert!(x.is_host_alias().unwrap());
    drop(x);
    assert_eq!(foreign.deletions(), 1);

    // A scalar (no shape array) and an empty array without data.
    let mut foreign = Foreign::host(&VALUES);
    foreign.versioned.dl_tensor.ndim = 0;
    foreign.versioned.dl_tensor.shape = std::ptr::null_mut();
    foreign.versioned.dl_tensor.strides = std::ptr::null_mut();
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), [0.0]);
    drop(x);
    assert_eq!(foreign.deletions(), 1);
    let mut foreign = Foreign::host(&VALUES);
    foreign.shape = [0, 3];
    foreign.versioned.dl_tensor.data = std::ptr::null_mut();
    let x = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap();
    assert_eq!(x.dims().unwrap(), [0, 3]);
    assert_eq!(x.to_dlpack_versioned().unwrap().as_slice::<f32>().unwrap(), [0f32; 0]);
    drop(x);
    assert_eq!(foreign.deletions(), 1);

    // NULL data for a non-empty array, a negative extent, ndim 65: refused, deleted once.
    let cases: [(&str, Spoil); 3] = [
        ("NULL data", |f| f.versioned.dl_tensor.data = std::ptr::null_mut()),
        ("negative extent", |f| f.shape = [-2, 3]),
        ("ndim 65", |f| f.versioned.dl_tensor.ndim = 65),
    ];
    for (what, spoil) in cases {
        let mut foreign = Foreign::host(&VALUES);
        spoil(&mut foreign);
        let err = unsafe { device.buffer_from_dlpack_versioned(&mut foreign.versioned) }.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{what}: {err}");
        assert_eq!(foreign.deletions(), 1, "{what}");
    }
}

#[test]
fn an_exported_tensor_survives_the_donation_of_its_buffer() {
    let c = client("cpu");
    let exe = add_one(&c);
    let (data, drops) = counted(&VALUES);
    let x = c.device(0).unwrap().buffer_alias_host(data, &[2, 3]).unwrap();
    let t = x.to_dlpack_versioned().unwrap();
    let out = exe.execute_donating(vec![kiln::Argument::Donated(x)], &ExecuteOptions::default()).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), VALUES.map(|v| v + 1.0));
    assert_ne!(out[0].to_dlpack_versioned().unwrap().data_ptr(), t.data_ptr());
    assert_eq!(t.as_slice::<f32>().unwrap(), VALUES, "donation does not write into exported memory");
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(t);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}
