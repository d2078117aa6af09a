//! User-defined ops from Rust: the seed's ZeroOut in its four versions on cpu
//! and interpreter, constraint errors, a kernel error reaching the caller, and
//! ZeroOut's gradient through `value_and_grad`.

use std::sync::Once;

use kiln::{AttrValue, Builder, Client, Code, ElementType, Error, GradFrame, KernelFrame, Op, OpDef};

fn zero_out(f: &mut KernelFrame<'_>) -> kiln::Result<()> {
    let keep = match f.attr("preserve_index") {
        Some(AttrValue::Int(i)) => i as usize,
        _ => 0,
    };
    for r in 0..f.num_results() {
        let n = f.arg_dims(r)[0] as usize;
        if keep >= n.max(1) {
            return Err(Error::kernel(Code::InvalidArgument, format!("preserve_index out of range: {keep}")));
        }
        match f.arg_type(r) {
            Some(ElementType::F32) => {
                let x = f.arg::<f32>(r).to_vec();
                let out = f.result_mut::<f32>(r);
                out.fill(0.0);
                out[keep] = x[keep];
            }
            _ => {
                let x = f.arg::<i32>(r).to_vec();
                let out = f.result_mut::<i32>(r);
                out.fill(0);
                out[keep] = x[keep];
            }
        }
    }
    Ok(())
}

fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        OpDef::new("RsZeroOut").input("to_zero: int32").output("zeroed: int32").doc("ZeroOut").register().unwrap();
        kiln::register_kernel("RsZeroOut", "host", Some(ElementType::S32), zero_out).unwrap();
        OpDef::new("RsZeroOutIndex")
            .attr("preserve_index: int >= 0 = 0")
            .input("to_zero: int32")
            .output("zeroed: int32")
            .register()
            .unwrap();
        kiln::register_kernel("RsZeroOutIndex", "host", Some(ElementType::S32), zero_out).unwrap();
        OpDef::new("RsZeroOutPoly")
            .attr("T: {float, int32}")
            .input("to_zero: T")
            .output("zeroed: T")
            .register()
            .unwrap();
        for t in [ElementType::S32, ElementType::F32] {
            kiln::register_kernel("RsZeroOutPoly", "host", Some(t), zero_out).unwrap();
        }
        OpDef::new("RsZeroOutList")
            .attr("N: int >= 1")
            .attr("T: {float, int32}")
            .input("to_zero: N * T")
            .output("zeroed: N * T")
            .register()
            .unwrap();
        kiln::register_kernel("RsZeroOutList", "host", None, zero_out).unwrap();
    });
}

fn run(backend: &str, op: &str, n_args: usize, attrs: Option<&str>) -> kiln::Result<Vec<Vec<i32>>> {
    register();
    let b = Builder::new(op)?;
    let params: Vec<_> = (0..n_args).map(|i| b.parameter(i as i64, ElementType::S32, &[5], "x")).collect();
    let computation = b.build(b.call_registered(op, &params, attrs))?;
    let client = Client::with_backend(backend)?;
    let exe = client.compile(&computation)?;
    let x = client.buffer_from_slice(&[5i32, 4, 3, 2, 1], &[5])?;
    let args: Vec<_> = (0..n_args).map(|_| &x).collect();
    let results = exe.execute(&args)?;
    let values = results.iter().map(|r| r.to_vec::<i32>()).collect();
    values
}

#[test]
fn zero_out_versions_on_cpu_and_interpreter() {
    for backend in ["cpu", "interpreter"] {
        assert_eq!(run(backend, "RsZeroOut", 1, None).unwrap(), [[5, 0, 0, 0, 0]]);
        assert_eq!(run(backend, "RsZeroOutIndex", 1, None).unwrap(), [[5, 0, 0, 0, 0]]);
        assert_eq!(run(backend, "RsZeroOutIndex", 1, Some("{preserve_index = 3}")).unwrap(), [[0, 0, 0, 2, 0]]);
        assert_eq!(run(backend, "RsZeroOutPoly", 1, None).unwrap(), [[5, 0, 0, 0, 0]]);
        assert_eq!(run(backend, "RsZeroOutList", 2, None).unwrap(), [[5, 0, 0, 0, 0], [5, 0, 0, 0, 0]]);
    }
}

#[test]
fn constraint_and_kernel_errors() {
    let e = run("cpu", "RsZeroOutIndex", 1, Some("{preserve_index = -1}")).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("less than its minimum 0"), "{e}");
    let e = run("cpu", "RsZeroOutList", 0, None).unwrap_err();
    assert!(e.message().contains("fewer than its minimum 1"), "{e}");
    let e = run("cpu", "RsZeroOut", 1, Some("{nope = 1}")).unwrap_err();
    assert!(e.message().contains("unknown attribute 'nope'"), "{e}");
    let e = run("interpreter", "RsZeroOutIndex", 1, Some("{preserve_index = 9}")).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("kernel failed on host: preserve_index out of range: 9"), "{e}");
    let e = OpDef::new("RsZeroOut").input("to_zero: int32").output("zeroed: int32").register().unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);
    assert!(kiln::registered_ops().unwrap().contains("RsZeroOutIndex(to_zero: int32) -> (zeroed: int32)"));
}

/// The seed's `_zero_out_grad`: the output cotangent at the preserved index only.
fn zero_out_grad<'b>(f: &GradFrame<'b>) -> kiln::Result<Vec<Option<Op<'b>>>> {
    let b = f.builder();
    let keep = match f.attr("preserve_index") {
        Some(AttrValue::Int(i)) => i,
        _ => 0,
    };
    let mut grads = Vec::new();
    for (x, g) in f.operands().iter().zip(f.output_grads()) {
        let shape = x.shape()?;
        let at_keep = b.eq(b.iota(ElementType::S64, &shape.dims, 0), b.constant_scalar(keep));
        let zeros = b.broadcast(b.convert(b.constant_scalar(0i32), shape.element_type), &shape.dims);
        grads.push(Some(b.select(at_keep, *g, zeros)));
    }
    Ok(grads)
}

fn register_grad_ops() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let def = |name: &str| {
            OpDef::new(name).attr("preserve_index: int >= 0 = 0").input("to_zero: float").output("zeroed: float")
        };
        def("RsZeroOutGrad").grad(zero_out_grad).register().unwrap();
        def("RsZeroOutNoGrad").register().unwrap();
        def("RsZeroOutBadGrad")
            .grad(|_: &GradFrame<'_>| Err(Error::kernel(Code::FailedPrecondition, "no gradient on Thursdays")))
            .register()
            .unwrap();
        for name in ["RsZeroOutGrad", "RsZeroOutNoGrad", "RsZeroOutBadGrad"] {
            kiln::register_kernel(name, "host", Some(ElementType::F32), zero_out).unwrap();
        }
    });
}

/// d/dx of dot(op(x), w) at x = [1.5, ..., 5.5], w = [1, ..., 5]: (loss, gradient).
fn grad_of(backend: &str, op: &str, attrs: Option<&str>) -> kiln::Result<(f32, Vec<f32>)> {
    register_grad_ops();
    let b = Builder::new("loss")?;
    let x = b.parameter(0, ElementType::F32, &[5], "x");
    let loss = b.dot(b.call_registered(op, &[x], attrs), b.constant(&[1.0f32, 2.0, 3.0, 4.0, 5.0], &[5]));
    let gradient = b.build(loss)?.value_and_grad(&[0])?;
    let client = Client::with_backend(backend)?;
    let exe = client.compile(&gradient)?;
    let x = client.buffer_from_slice(&[1.5f32, 2.5, 3.5, 4.5, 5.5], &[5])?;
    let results = exe.execute(&[&x])?;
    Ok((results[0].to_vec::<f32>()?[0], results[1].to_vec::<f32>()?))
}

#[test]
fn zero_out_gradient() {
    for backend in ["cpu", "interpreter"] {
        assert_eq!(grad_of(backend, "RsZeroOutGrad", None).unwrap(), (1.5, vec![1.0, 0.0, 0.0, 0.0, 0.0]));
        assert_eq!(
            grad_of(backend, "RsZeroOutGrad", Some("{preserve_index = 3}")).unwrap(),
            (18.0, vec![0.0, 0.0, 0.0, 4.0, 0.0])
        );
    }
    let e = grad_of("cpu", "RsZeroOutNoGrad", None).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("op 'RsZeroOutNoGrad'") && e.message().contains("has no gradient registered"), "{e}");
    let e = grad_of("interpreter", "RsZeroOutBadGrad", None).unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert!(e.message().contains("op 'RsZeroOutBadGrad'") && e.message().contains("no gradient on Thursdays"), "{e}");
}

/// RsTile(x: float, times) repeats a vector `times` times: its shape function
/// makes the result `times` times as long, or refuses a rank other than 1.
#[test]
fn shape_function_sets_the_result_dims() {
    OpDef::new("RsTile")
        .attr("times: int >= 1")
        .input("x: float")
        .output("y: float")
        .shape_fn(|f| {
            let dims = f.arg_dims(0);
            if dims.len() != 1 {
                return Err(Error::kernel(
                    Code::InvalidArgument,
                    format!("RsTile takes a vector, got rank {}", dims.len()),
                ));
            }
            assert_eq!(f.result_type(0), Some(ElementType::F32));
            let Some(AttrValue::Int(times)) = f.attr("times") else {
                return Err(Error::kernel(Code::Internal, "no times"));
            };
            f.set_result_dims(0, &[dims[0] * times])
        })
        .register()
        .unwrap();
    kiln::register_kernel("RsTile", "host", Some(ElementType::F32), |f: &mut KernelFrame<'_>| {
        let x = f.arg::<f32>(0).to_vec();
        for (i, y) in f.result_mut::<f32>(0).iter_mut().enumerate() {
            *y = x[i % x.len()];
        }
        Ok(())
    })
    .unwrap();
    for backend in ["cpu", "interpreter"] {
        let b = Builder::new("tile").unwrap();
        let x = b.parameter(0, ElementType::F32, &[2], "x");
        let y = b.call_registered("RsTile", &[x], Some("{times = 3}"));
        assert_eq!(b.shape(y).unwrap().dims, [6]);
        let computation = b.build(y).unwrap();
        let client = Client::with_backend(backend).unwrap();
        let exe = client.compile(&computation).unwrap();
        let arg = client.buffer_from_slice(&[1.5f32, -2.0], &[2]).unwrap();
        let out = exe.execute(&[&arg]).unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), [1.5, -2.0, 1.5, -2.0, 1.5, -2.0], "{backend}");
    }
    let b = Builder::new("tile_matrix").unwrap();
    let x = b.parameter(0, ElementType::F32, &[2, 2], "x");
    b.call_registered("RsTile", &[x], Some("{times = 2}"));
    let e = b.first_error().unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("RsTile") && e.message().contains("RsTile takes a vector, got rank 2"), "{e}");
}

/// Device kernels (SPIR-V on vulkan, PTX on cuda) registered from Rust: the
/// code and entry point are checked at registration.
#[test]
fn device_kernels_are_checked_when_registered() {
    const PTX: &str = ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n\tret;\n}\n";
    OpDef::new("RsDeviceZeroOut").input("to_zero: int32").output("zeroed: int32").register().unwrap();
    let s32 = Some(ElementType::S32);
    let e = kiln::register_device_kernel("RsDeviceZeroOut", "vulkan", s32, &[1, 2, 3, 4], "main", 0, 0).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("the vulkan kernel is not a SPIR-V module"), "{e}");
    let e = kiln::register_device_kernel("RsDeviceZeroOut", "cuda", s32, PTX.as_bytes(), "main", 0, 0).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert!(e.message().contains("has no .entry kernel named 'main' (it has 'k')"), "{e}");
    kiln::register_device_kernel("RsDeviceZeroOut", "cuda", s32, PTX.as_bytes(), "k", 32, 0).unwrap();
    let e = kiln::register_device_kernel("RsDeviceZeroOut", "cuda", s32, PTX.as_bytes(), "k", 0, 0).unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);
    assert!(kiln::registered_ops().unwrap().contains("cuda:s32 (k)"));
}
