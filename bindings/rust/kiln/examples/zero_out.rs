//! The seed's ZeroOut op ("Adding an op") defined from Rust and run:
//! `cargo run --example zero_out [cpu|interpreter]`.

use kiln::{AttrValue, Builder, Client, Code, ElementType, Error, KernelFrame, OpDef};

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
    OpDef::new("ZeroOutPoly").attr("T: {float, int32}").input("to_zero: T").output("zeroed: T").register()?;
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
    Ok(())
}
