//! The seed's ZeroOut op ("Adding an op") defined from Rust and run, and the
//! gradient of a loss through ZeroOutPoly (the op's gradient function):
//! `cargo run --example zero_out [cpu|interpreter]`.

use kiln::{AttrValue, Builder, Client, Code, ElementType, Error, GradFrame, KernelFrame, Op, OpDef};

/// The seed's `_zero_out_grad`: each output's cotangent at the preserved
/// index, zero elsewhere.
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

/// d/dx dot(ZeroOutPoly(x), w): w at the preserved index 0, zero elsewhere.
fn gradient(client: &Client, x: &[f32], w: &[f32]) -> kiln::Result<Vec<f32>> {
    let b = Builder::new("loss")?;
    let p = b.parameter(0, ElementType::F32, &[x.len() as i64], "x");
    let loss = b.dot(b.call_registered("ZeroOutPoly", &[p], None), b.constant(w, &[w.len() as i64]));
    let grad = b.build(loss)?.value_and_grad(&[0])?;
    let exe = client.compile(&grad)?;
    let xb = client.buffer_from_slice(x, &[x.len() as i64])?;
    let results = exe.execute(&[&xb])?;
    results[1].to_vec::<f32>()
}

/// Every result: its argument with all elements but one set to zero.
fn zero_out(f: &mut KernelFrame<'_>) -> kiln::Result<()> {
    let keep = match f.attr("preserve_index") {
        Some(AttrValue::Int(i)) => i as usize,
        _ => 0,
    };
    for r in 0..f.num_results() {
        if f.arg_dims(r).len() != 1 {
            return Err(Error::kernel(Code::InvalidArgument, "ZeroOut expects a 1-D vector."));
        }
        let n = f.arg_dims(r)[0] as usize;
        if n > 0 && keep >= n {
            return Err(Error::kernel(Code::InvalidArgument, format!("preserve_index out of range: {keep}")));
        }
        if f.arg_type(r) == Some(ElementType::F32) {
            let x = f.arg::<f32>(r).to_vec();
            let out = f.result_mut::<f32>(r);
            out.fill(0.0);
            if n > 0 {
                out[keep] = x[keep];
            }
        } else {
            let x = f.arg::<i32>(r).to_vec();
            let out = f.result_mut::<i32>(r);
            out.fill(0);
            if n > 0 {
                out[keep] = x[keep];
            }
        }
    }
    Ok(())
}

fn main() -> kiln::Result<()> {
    let s32 = Some(ElementType::S32);
    OpDef::new("ZeroOut").input("to_zero: int32").output("zeroed: int32").register()?;
    kiln::register_kernel("ZeroOut", "host", s32, zero_out)?;
    OpDef::new("ZeroOutIndex")
        .attr("preserve_index: int >= 0 = 0")
        .input("to_zero: int32")
        .output("zeroed: int32")
        .register()?;
    kiln::register_kernel("ZeroOutIndex", "host", s32, zero_out)?;
    OpDef::new("ZeroOutPoly")
        .attr("T: {float, int32}")
        .input("to_zero: T")
        .output("zeroed: T")
        .grad(zero_out_grad)
        .register()?;
    for t in [ElementType::S32, ElementType::F32] {
        kiln::register_kernel("ZeroOutPoly", "host", Some(t), zero_out)?;
    }
    OpDef::new("ZeroOutList")
        .attr("N: int >= 1")
        .attr("T: {float, int32}")
        .input("to_zero: N * T")
        .output("zeroed: N * T")
        .register()?;
    kiln::register_kernel("ZeroOutList", "host", None, zero_out)?;

    let backend = std::env::args().nth(1).unwrap_or_else(|| "cpu".into());
    let client = Client::with_backend(&backend)?;
    let x = client.buffer_from_slice(&[5i32, 4, 3, 2, 1], &[5])?;
    for (op, args, attrs) in [
        ("ZeroOut", 1, None),
        ("ZeroOutIndex", 1, None),
        ("ZeroOutIndex", 1, Some("{preserve_index = 3}")),
        ("ZeroOutPoly", 1, None),
        ("ZeroOutList", 2, None),
        ("ZeroOutIndex", 1, Some("{preserve_index = 7}")),
    ] {
        let b = Builder::new(op)?;
        let params: Vec<_> = (0..args).map(|i| b.parameter(i, ElementType::S32, &[5], "x")).collect();
        let computation = b.build(b.call_registered(op, &params, attrs))?;
        let exe = client.compile(&computation)?;
        let arguments: Vec<_> = (0..args).map(|_| &x).collect();
        match exe.execute(&arguments) {
            Ok(results) => {
                for r in results {
                    println!("{op} {}: {:?}", attrs.unwrap_or(""), r.to_vec::<i32>()?);
                }
            }
            Err(e) => println!("{op} {}: error: {e}", attrs.unwrap_or("")),
        }
    }
    let dx = gradient(&client, &[1.5, 2.5, 3.5, 4.5, 5.5], &[2.0, 3.0, 4.0, 5.0, 6.0])?;
    println!("d/dx dot(ZeroOutPoly(x), w): {dx:?}");
    if dx != [2.0, 0.0, 0.0, 0.0, 0.0] {
        return Err(Error::kernel(
            Code::Internal,
            format!("ZeroOutPoly's gradient is {dx:?}, not w at index 0 and zero elsewhere"),
        ));
    }
    Ok(())
}
