//! User-defined ops from Rust: the seed's ZeroOut in its four versions on cpu
//! and interpreter, constraint errors and a kernel error reaching the caller.

use std::sync::Once;

use kiln::{AttrValue, Builder, Client, Code, ElementType, Error, KernelFrame, OpDef};

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
