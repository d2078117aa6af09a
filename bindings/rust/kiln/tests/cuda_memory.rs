//! Raw CUDA memory and DLPack's kDLCUDA on Kiln's fake CUDA driver
//! (tests/cuda/fake_driver), whose device memory is host memory and whose
//! launches run nothing: a cuda buffer's address round-trips through an alias
//! and through DLPack, an alias reads back the values at its address, a kernel
//! run on it is given that address (the fake records the launch), the release
//! closure and the tensor's deleter run once, and every refusal carries its
//! code and names the call.
//!
//! The CUDA driver loads once per process, so the checks run in a child
//! process of this test binary with KILN_CUDA_DRIVER naming the fake driver
//! (KILN_FAKE_CUDA_DRIVER, which ci.sh sets to the one in the build tree) and
//! two fake GPUs. Without it the test fails, saying so.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use kiln::sys;
use kiln::{Buffer, Builder, Client, ClientOptions, Code, CudaMemory, Device, DlpackTensor, ElementType};

mod foreign;
use foreign::Foreign;

const CHILD: &str = "KILN_RUST_FAKE_CUDA_CHILD";
const VALUES: [f32; 6] = [0.0, 10.0, 20.0, 30.0, 40.0, 50.0];
const DIMS: [i64; 2] = [2, 3];

#[test]
fn cuda_memory_on_the_fake_driver() {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    let driver = std::env::var("KILN_FAKE_CUDA_DRIVER").unwrap_or_else(|_| {
        panic!(
            "KILN_FAKE_CUDA_DRIVER is not set: it must name Kiln's fake CUDA driver, \
             BUILD_DIR/tests/cuda/libkiln_fake_cuda_driver.so (bindings/rust/ci.sh sets it)"
        )
    });
    if let Err(e) = std::fs::metadata(&driver) {
        panic!(
            "the fake CUDA driver {driver} is not built (cmake --build BUILD_DIR --target kiln_fake_cuda_driver): {e}"
        );
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "cuda_memory_on_the_fake_driver", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("KILN_CUDA_DRIVER", &driver)
        .env("KILN_FAKE_CUDA_DEVICES", "2")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    println!("fake-driver run:\n{text}");
    assert!(output.status.success(), "the fake-driver run failed");
    assert!(text.contains("fake cuda: all checks ran"), "the fake-driver run did not run its checks");
}

fn child() {
    let c = Client::with_options(&ClientOptions { backend: Some("cuda"), num_devices: 0 })
        .unwrap_or_else(|e| panic!("no cuda client on the fake driver: {e}"));
    assert_eq!(c.device_count().unwrap(), 2, "KILN_FAKE_CUDA_DEVICES=2 shows two GPUs");
    address_round_trip(&c);
    aliased_buffer_in_a_kernel(&c);
    host_buffers_have_no_cuda_memory();
    alias_refusals(&c);
    dlpack_export(&c);
    dlpack_import(&c);
    dlpack_import_refusals(&c);
    println!("fake cuda: all checks ran");
}

/// GPU memory "another library" owns: a Kiln buffer on GPU `gpu` holding
/// VALUES, and its address.
fn owner<'c>(c: &'c Client, gpu: usize) -> (Device<'c>, Buffer<'c>, u64) {
    let d = c.device(gpu).unwrap();
    let b = d.buffer_from_slice(&VALUES, &DIMS).unwrap();
    let m = b.cuda_memory().unwrap().expect("a cuda buffer has CUDA memory");
    assert_eq!(m.ordinal, gpu as i32);
    assert_ne!(m.address, 0);
    (d, b, m.address)
}

fn counter() -> (Arc<AtomicUsize>, impl FnOnce() + Send + 'static) {
    let n = Arc::new(AtomicUsize::new(0));
    let m = Arc::clone(&n);
    (n, move || {
        m.fetch_add(1, Ordering::SeqCst);
    })
}

fn alias<'c>(d: &Device<'c>, address: u64, release: impl FnOnce() + Send + 'static) -> kiln::Result<Buffer<'c>> {
    // SAFETY: `address` is an owner buffer's, alive until the alias is gone
    // (or an address the library refuses, then never read).
    unsafe { d.buffer_alias_cuda_memory(ElementType::F32, &DIMS, address, release) }
}

fn address_round_trip(c: &Client) {
    for gpu in 0..2 {
        let (d, _owner, address) = owner(c, gpu);
        let (released, release) = counter();
        let b = alias(&d, address, release).unwrap();
        assert_eq!(b.cuda_memory().unwrap(), Some(CudaMemory { ordinal: gpu as i32, address }));
        assert_eq!(b.to_vec::<f32>().unwrap(), VALUES);
        assert_eq!(released.load(Ordering::SeqCst), 0);
        drop(b);
        assert_eq!(released.load(Ordering::SeqCst), 1, "released once, when the alias went");
    }
}

/// The parameters of the fake driver's last launch.
fn last_launch_parameters() -> Vec<u64> {
    extern "C" {
        fn dlopen(path: *const c_char, flags: c_int) -> *mut c_void;
        fn dlsym(library: *mut c_void, name: *const c_char) -> *mut c_void;
        fn dlclose(library: *mut c_void) -> c_int;
    }
    type LastLaunch = unsafe extern "C" fn(*mut c_char, usize, *mut c_uint, *mut c_uint, *mut u64, usize) -> c_int;
    const RTLD_NOW: c_int = 2;
    let path = CString::new(std::env::var("KILN_CUDA_DRIVER").unwrap()).unwrap();
    let mut parameters = [0u64; 64];
    // SAFETY: the fake driver Kiln loaded (dlopen counts one more use), and its
    // kiln_fake_cuda_last_launch, which fills at most the given capacities.
    let count = unsafe {
        let library = dlopen(path.as_ptr(), RTLD_NOW);
        assert!(!library.is_null(), "KILN_CUDA_DRIVER cannot be loaded");
        let symbol = dlsym(library, c"kiln_fake_cuda_last_launch".as_ptr());
        assert!(!symbol.is_null(), "KILN_CUDA_DRIVER is not the fake driver");
        let last_launch: LastLaunch = std::mem::transmute(symbol);
        let mut entry = [0 as c_char; 128];
        let (mut grid, mut block) = ([0 as c_uint; 3], [0 as c_uint; 3]);
        let count = last_launch(
            entry.as_mut_ptr(),
            entry.len(),
            grid.as_mut_ptr(),
            block.as_mut_ptr(),
            parameters.as_mut_ptr(),
            parameters.len(),
        );
        dlclose(library);
        count
    };
    parameters[..(count.max(0) as usize).min(parameters.len())].to_vec()
}

fn aliased_buffer_in_a_kernel(c: &Client) {
    let (d, _owner, address) = owner(c, 0);
    let b = Builder::new("add_one").unwrap();
    let x = b.parameter(0, ElementType::F32, &DIMS, "x");
    let one = b.constant_scalar(1.0f32);
    let exe = c.compile(&b.build(b.add(x, b.broadcast(one, &DIMS))).unwrap()).unwrap();
    let (released, release) = counter();
    let aliased = alias(&d, address, release).unwrap();
    let out = exe.execute(&[&aliased]).unwrap();
    let parameters = last_launch_parameters();
    assert!(parameters.contains(&address), "the kernel's parameters {parameters:x?} lack {address:#x}");
    drop(out);
    assert_eq!(released.load(Ordering::SeqCst), 0, "the alias is still open");
    drop(aliased);
    assert_eq!(released.load(Ordering::SeqCst), 1);
}

fn host_buffers_have_no_cuda_memory() {
    let cpu = Client::with_backend("cpu").unwrap();
    let b = cpu.buffer_from_slice(&VALUES, &DIMS).unwrap();
    assert_eq!(b.cuda_memory().unwrap(), None);
}

/// An InvalidArgument whose message starts with `call` and holds `needle`.
fn check_refusal<T: std::fmt::Debug>(result: kiln::Result<T>, call: &str, needle: &str) {
    let e = result.expect_err(needle);
    assert_eq!(e.code(), Code::InvalidArgument, "{needle}: {e}");
    assert!(e.message().starts_with(call), "'{}' does not name {call}", e.message());
    assert!(e.message().contains(needle), "'{}' lacks '{needle}'", e.message());
}

fn alias_refusals(c: &Client) {
    let (d, _owner, address) = owner(c, 0);
    let cpu = Client::with_backend("cpu").unwrap();
    let cpu_device = cpu.device(0).unwrap();
    let cases: [(&Device, u64, &str); 3] = [
        (&cpu_device, address, "the cpu backend cannot read CUDA device memory"),
        (&d, address + 2, "kiln_device_buffer_alias_cuda_memory: cuda: device address 0x"),
        (&d, 0, "which holds elements"),
    ];
    for (device, at, needle) in cases {
        let (released, release) = counter();
        check_refusal(alias(device, at, release), "kiln_device_buffer_alias_cuda_memory", needle);
        assert_eq!(released.load(Ordering::SeqCst), 1, "{needle}: released once");
    }
}

fn dlpack_export(c: &Client) {
    for gpu in 0..2 {
        let b = c.device(gpu).unwrap().buffer_from_slice(&VALUES, &DIMS).unwrap();
        let address = b.cuda_memory().unwrap().unwrap().address;
        let versioned = b.to_dlpack_versioned().unwrap();
        let legacy = b.to_dlpack().unwrap();
        drop(b);
        let on_gpu = sys::DLDevice { device_type: sys::kDLCUDA, device_id: gpu as i32 };
        assert_eq!((versioned.device(), legacy.device()), (on_gpu, on_gpu));
        assert_eq!(versioned.data_ptr() as u64, address);
        assert_eq!(legacy.data_ptr() as u64, address);
        assert!(versioned.is_read_only() && !versioned.is_copied());
        assert_eq!(versioned.shape(), DIMS);
        // GPU memory is not a host slice (the fake's happens to be host memory).
        check_refusal(versioned.as_slice::<f32>(), "DlpackTensor::as_slice", "device type 2");
        // SAFETY: the fake driver's device memory is host memory.
        let held = unsafe { std::slice::from_raw_parts(versioned.data_ptr().cast::<f32>(), 6) };
        assert_eq!(held, VALUES, "the tensor keeps the memory after the buffer is gone");
    }
}

/// A foreign kDLCUDA f32[2,3] tensor at `address` on GPU `gpu`.
fn on_gpu(address: u64, gpu: i32) -> Box<Foreign> {
    Foreign::on_device(address, sys::DLDevice { device_type: sys::kDLCUDA, device_id: gpu })
}

fn dlpack_import(c: &Client) {
    for gpu in 0..2 {
        let (d, _owner, address) = owner(c, gpu);
        let mut f = on_gpu(address, gpu as i32);
        // SAFETY: a valid tensor over the owner's memory, which outlives the import.
        let b = unsafe { d.buffer_from_dlpack_versioned(&mut f.versioned) }.unwrap();
        assert_eq!(b.cuda_memory().unwrap(), Some(CudaMemory { ordinal: gpu as i32, address }));
        assert_eq!(b.to_vec::<f32>().unwrap(), VALUES);
        let back: DlpackTensor = b.to_dlpack_versioned().unwrap();
        assert_eq!(back.data_ptr() as u64, address, "one address both ways");
        drop(back);
        assert_eq!(f.deletions(), 0);
        drop(b);
        assert_eq!(f.deletions(), 1, "deleted once, when the buffer went");
    }
    // The legacy struct, with a byte offset.
    let (d, _owner, address) = owner(c, 1);
    let mut f = on_gpu(address - 256, 1);
    f.legacy.dl_tensor.byte_offset = 256;
    // SAFETY: as above.
    let b = unsafe { d.buffer_from_dlpack(&mut f.legacy) }.unwrap();
    assert_eq!(b.cuda_memory().unwrap().unwrap().address, address);
    assert_eq!(b.to_vec::<f32>().unwrap(), VALUES);
    drop(b);
    assert_eq!(f.deletions(), 1);
}

fn dlpack_import_refusals(c: &Client) {
    let (d, _owner, address) = owner(c, 0);
    let cpu = Client::with_backend("cpu").unwrap();
    let cpu_device = cpu.device(0).unwrap();
    let cases: [(&Device, u64, i32, &str); 4] = [
        (&d, address, 5, "the tensor lives on CUDA GPU 5 (kDLCUDA), which this cuda client does not have"),
        (&d, address, 1, "the tensor lives on CUDA GPU 1 (kDLCUDA), the device given is cuda:0"),
        (&cpu_device, address, 0, "the device is cpu's, which cannot read GPU memory"),
        (&d, address + 2, 0, "is not aligned to its element type (4 bytes)"),
    ];
    for (device, at, gpu, needle) in cases {
        let mut f = on_gpu(at, gpu);
        // SAFETY: a valid tensor; refused, so its memory is never read.
        let result = unsafe { device.buffer_from_dlpack_versioned(&mut f.versioned) };
        check_refusal(result, "kiln_device_buffer_from_dlpack_versioned", needle);
        assert_eq!(f.deletions(), 1, "{needle}: deleted once");
    }
}
