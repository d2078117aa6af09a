//! Forward mode: `Computation::jvp` over kiln_computation_jvp, checked
//! against derivatives worked out by hand, and its refusals.

use kiln::{Builder, Client, Code, Computation, ElementType};

/// f(w: f32[3], x: f32[3], n: s32[]) = (sin(w) * x, n)
fn sine_times() -> Computation {
    let b = Builder::new("sine_times").unwrap();
    let w = b.parameter(0, ElementType::F32, &[3], "w");
    let x = b.parameter(1, ElementType::F32, &[3], "x");
    let n = b.parameter(2, ElementType::S32, &[], "n");
    let result = b.tuple(&[b.mul(b.sin(w), x), n]);
    b.build(result).unwrap()
}

const W: [f32; 3] = [1.0, -2.0, 0.5];
const X: [f32; 3] = [3.0, 0.25, -4.0];
const DW: [f32; 3] = [0.5, 1.0, -1.5];
const DX: [f32; 3] = [2.0, -1.0, 0.125];

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-5 * (1.0 + y.abs()))
}

#[test]
fn jvp_returns_results_then_their_tangents() {
    // wrt [1, 0]: x's tangent comes first, then w's.
    let jvp = sine_times().jvp(&[1, 0]).unwrap();
    assert_eq!(jvp.parameter_count().unwrap(), 5);
    let client = Client::new().unwrap();
    let exe = client.compile(&jvp).unwrap();
    let args = [
        client.buffer_from_slice(&W, &[3]).unwrap(),
        client.buffer_from_slice(&X, &[3]).unwrap(),
        client.buffer_from_slice(&[7i32], &[]).unwrap(),
        client.buffer_from_slice(&DX, &[3]).unwrap(),
        client.buffer_from_slice(&DW, &[3]).unwrap(),
    ];
    let out = exe.execute(&args.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(out.len(), 4);
    let want_y: Vec<f32> = W.iter().zip(&X).map(|(w, x)| w.sin() * x).collect();
    let want_dy: Vec<f32> = (0..3).map(|i| W[i].cos() * DW[i] * X[i] + W[i].sin() * DX[i]).collect();
    assert!(close(&out[0].to_vec::<f32>().unwrap(), &want_y));
    assert_eq!(out[1].to_vec::<i32>().unwrap(), vec![7]);
    let dy = out[2].to_vec::<f32>().unwrap();
    assert!(close(&dy, &want_dy), "dy {dy:?}, want {want_dy:?}");
    assert_eq!(out[3].to_vec::<i32>().unwrap(), vec![0], "an integer result has no tangent");
}

#[test]
fn jvp_refusals_name_what_is_wrong() {
    let f = sine_times();
    for (wrt, needle) in
        [(&[3][..], "parameter 3"), (&[0, 0][..], "repeats parameter 0"), (&[2][..], "s32"), (&[][..], "wrt is empty")]
    {
        let error = match f.jvp(wrt) {
            Ok(_) => panic!("jvp({wrt:?}) succeeded, expected a refusal"),
            Err(error) => error,
        };
        assert_eq!(error.code(), Code::InvalidArgument, "{error}");
        assert!(error.message().contains(needle), "{error}");
        assert!(error.message().contains("kiln_computation_jvp"), "{error}");
    }
}
