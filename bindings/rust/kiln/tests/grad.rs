//! Gradients: `Computation::grad` and `Computation::value_and_grad` over
//! kiln_computation_vjp and kiln_computation_value_and_grad, checked against
//! derivatives worked out by hand.

use kiln::{Builder, Client, Code, Computation, ElementType, Shape};

fn add_f32() -> Computation {
    let b = Builder::new("add").unwrap();
    let sum = b.add(b.parameter(0, ElementType::F32, &[], "a"), b.parameter(1, ElementType::F32, &[], "b"));
    b.build(sum).unwrap()
}

/// loss(w: f32[3], x: f32[3], n: s32[]) = sum(w * w * x)
fn loss() -> Computation {
    let add = add_f32();
    let b = Builder::new("loss").unwrap();
    let w = b.parameter(0, ElementType::F32, &[3], "w");
    let x = b.parameter(1, ElementType::F32, &[3], "x");
    b.parameter(2, ElementType::S32, &[], "n");
    let sum = b.reduce(b.mul(b.mul(w, w), x), b.constant_scalar(0.0f32), &add, &[0]);
    b.build(sum).unwrap()
}

const W: [f32; 3] = [1.0, -2.0, 0.5];
const X: [f32; 3] = [3.0, 0.25, -4.0];

fn refused(result: kiln::Result<Computation>) -> kiln::Error {
    match result {
        Ok(_) => panic!("succeeded, expected a refusal"),
        Err(error) => error,
    }
}

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-5 * (1.0 + y.abs()))
}

#[test]
fn value_and_grad_of_a_loss() {
    let gradient = loss().value_and_grad(&[1, 0]).unwrap();
    assert_eq!(gradient.parameter_count().unwrap(), 3);
    let client = Client::new().unwrap();
    let exe = client.compile(&gradient).unwrap();
    let args = [
        client.buffer_from_slice(&W, &[3]).unwrap(),
        client.buffer_from_slice(&X, &[3]).unwrap(),
        client.buffer_from_slice(&[7i32], &[]).unwrap(),
    ];
    let out = exe.execute(&args.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(out.len(), 3);
    let value = out[0].to_vec::<f32>().unwrap();
    let dx = out[1].to_vec::<f32>().unwrap();
    let dw = out[2].to_vec::<f32>().unwrap();
    assert!(close(&value, &[3.0 + 1.0 - 1.0]), "loss {value:?}");
    let want_dx: Vec<f32> = W.iter().map(|w| w * w).collect();
    let want_dw: Vec<f32> = W.iter().zip(&X).map(|(w, x)| 2.0 * w * x).collect();
    assert!(close(&dx, &want_dx), "dx {dx:?}, want {want_dx:?}");
    assert!(close(&dw, &want_dw), "dw {dw:?}, want {want_dw:?}");
}

#[test]
fn grad_of_a_vector_function_takes_a_cotangent() {
    let b = Builder::new("sin").unwrap();
    let y = b.sin(b.parameter(0, ElementType::F32, &[3], "x"));
    let vjp = b.build(y).unwrap().grad(&[0]).unwrap();
    assert_eq!(vjp.parameter_count().unwrap(), 2);
    let client = Client::new().unwrap();
    let exe = client.compile(&vjp).unwrap();
    let x = [0.0f32, 1.0, -0.5];
    let cotangent = [1.0f32, 2.0, -3.0];
    let args = [client.buffer_from_slice(&x, &[3]).unwrap(), client.buffer_from_slice(&cotangent, &[3]).unwrap()];
    let out = exe.execute(&args.iter().collect::<Vec<_>>()).unwrap();
    let want_y: Vec<f32> = x.iter().map(|v| v.sin()).collect();
    let want_dx: Vec<f32> = x.iter().zip(&cotangent).map(|(v, c)| c * v.cos()).collect();
    assert!(close(&out[0].to_vec::<f32>().unwrap(), &want_y));
    assert!(close(&out[1].to_vec::<f32>().unwrap(), &want_dx));
}

#[test]
fn refusals_name_what_is_wrong() {
    let loss = loss();
    for (wrt, needle) in [
        (&[3][..], "parameter 3"),
        (&[0, 1, 0][..], "repeats parameter 0"),
        (&[2][..], "s32"),
        (&[][..], "wrt is empty"),
    ] {
        let error = refused(loss.value_and_grad(wrt));
        assert_eq!(error.code(), Code::InvalidArgument, "{error}");
        assert!(error.message().contains(needle), "{error}");
        assert!(error.message().contains("kiln_computation_value_and_grad"), "{error}");
    }
    // A custom call with no gradient registered has no derivative.
    let b = Builder::new("opaque").unwrap();
    let x = b.parameter(0, ElementType::F32, &[], "x");
    let opaque = b.custom_call("kiln_test_no_gradient", &[x], &Shape::new(ElementType::F32, &[]), None, false);
    let error = refused(b.build(opaque).unwrap().grad(&[0]));
    assert_eq!(error.code(), Code::InvalidArgument, "{error}");
    assert!(error.message().contains("'custom-call' is not differentiable"), "{error}");
}

/// map is differentiated through its body: sum(map(add, x, x)) has gradient 2.
#[test]
fn grad_of_a_map() {
    let add = add_f32();
    let b = Builder::new("mapped").unwrap();
    let x = b.parameter(0, ElementType::F32, &[4], "x");
    let mapped = b.map(&[x, x], &add, &[0]);
    let sum = b.reduce(mapped, b.constant_scalar(0.0f32), &add, &[0]);
    let gradient = b.build(sum).unwrap().value_and_grad(&[0]).unwrap();
    let client = Client::new().unwrap();
    let exe = client.compile(&gradient).unwrap();
    let args = [client.buffer_from_slice(&[0.5f32, -1.0, 2.0, 3.0], &[4]).unwrap()];
    let out = exe.execute(&args.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(out.len(), 2);
    let value = out[0].to_vec::<f32>().unwrap();
    let dx = out[1].to_vec::<f32>().unwrap();
    assert!(close(&value, &[9.0]), "value {value:?}");
    assert!(close(&dx, &[2.0; 4]), "dx {dx:?}");
}
