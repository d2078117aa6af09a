//! The shared binding test set: builder MLP, corpus HLO module, shape error,
//! concurrent execution; plus a few binding-specific checks.

use std::path::PathBuf;

use kiln::{Builder, Client, Code, ElementType, FftType, Precision};

/// A 2-layer MLP built with the builder: relu(x·w1 + b1)·w2 + b2.
fn build_mlp() -> kiln::Computation {
    let b = Builder::new("mlp").unwrap();
    let x = b.parameter(0, ElementType::F32, &[2, 3], "x");
    let w1 = b.parameter(1, ElementType::F32, &[3, 4], "w1");
    let b1 = b.parameter(2, ElementType::F32, &[4], "b1");
    let w2 = b.parameter(3, ElementType::F32, &[4, 2], "w2");
    let b2 = b.parameter(4, ElementType::F32, &[2], "b2");
    let h = b.add_broadcast(b.dot(x, w1), b1, &[1]);
    let h = b.max(h, b.constant_scalar(0.0f32));
    let y = b.add_broadcast(b.dot(h, w2), b2, &[1]);
    assert_eq!(y.shape().unwrap(), kiln::Shape::new(ElementType::F32, &[2, 2]));
    b.build(y).unwrap()
}

const X: [f32; 6] = [1.0, -2.0, 0.5, 3.0, 0.0, -1.0];
const W1: [f32; 12] = [0.5, -1.0, 0.25, 2.0, 1.0, 0.5, -0.5, 0.0, -2.0, 1.5, 1.0, -1.0];
const B1: [f32; 4] = [0.1, -0.2, 0.3, 0.0];
const W2: [f32; 8] = [1.0, -1.0, 0.5, 2.0, -0.25, 0.75, 2.0, 0.0];
const B2: [f32; 2] = [0.5, -0.5];

/// The same MLP by hand, in f64.
fn reference(x: &[f32]) -> Vec<f32> {
    let mut out = Vec::new();
    for r in 0..2 {
        let mut h = [0f64; 4];
        for (j, hj) in h.iter_mut().enumerate() {
            let mut s = B1[j] as f64;
            for k in 0..3 {
                s += x[r * 3 + k] as f64 * W1[k * 4 + j] as f64;
            }
            *hj = s.max(0.0);
        }
        for j in 0..2 {
            let mut s = B2[j] as f64;
            for (k, hk) in h.iter().enumerate() {
                s += hk * W2[k * 2 + j] as f64;
            }
            out.push(s as f32);
        }
    }
    out
}

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
}

#[test]
fn builder_mlp_matches_hand_computation() {
    let client = Client::new().unwrap();
    let exe = client.compile(&build_mlp()).unwrap();
    assert_eq!(exe.parameter_count().unwrap(), 5);
    assert_eq!(exe.result_count(), 1);
    let args = [
        client.buffer_from_slice(&X, &[2, 3]).unwrap(),
        client.buffer_from_slice(&W1, &[3, 4]).unwrap(),
        client.buffer_from_slice(&B1, &[4]).unwrap(),
        client.buffer_from_slice(&W2, &[4, 2]).unwrap(),
        client.buffer_from_slice(&B2, &[2]).unwrap(),
    ];
    let out = exe.execute(&args.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].shape().unwrap(), kiln::Shape::new(ElementType::F32, &[2, 2]));
    let got = out[0].to_vec::<f32>().unwrap();
    let want = reference(&X);
    // relu must clamp something for the test to mean anything.
    assert!(close(&got, &want, 1e-5), "got {got:?}, want {want:?}");
}

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/conformance/corpus").join(name)
}

#[test]
fn corpus_hlo_module_matches_expected_outputs() {
    let dir = corpus("mlp_forward");
    let computation = kiln::Computation::from_hlo_file(dir.join("module.hlo")).unwrap();
    let client = Client::new().unwrap();
    let exe = client.compile(&computation).unwrap();
    let n = exe.parameter_count().unwrap();
    assert_eq!(n, computation.parameter_count().unwrap());
    let inputs: Vec<_> = (0..n)
        .map(|i| {
            let t = exe.parameter_type(i).unwrap();
            client.buffer_from_npy(dir.join(format!("in{i}.npy")), Some(t)).unwrap()
        })
        .collect();
    let outputs = exe.execute(&inputs.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(outputs.len(), exe.result_count());
    for (i, out) in outputs.iter().enumerate() {
        let want = client.buffer_from_npy(dir.join(format!("out{i}.npy")), None).unwrap();
        assert_eq!(out.shape().unwrap(), want.shape().unwrap());
        let (got, want) = (out.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        assert!(close(&got, &want, 1e-5), "output {i}: got {got:?}, want {want:?}");
    }
}

#[test]
fn shape_error_is_an_invalid_argument_naming_the_op() {
    let b = Builder::new("bad").unwrap();
    let x = b.parameter(0, ElementType::F32, &[2], "x");
    let y = b.parameter(1, ElementType::F32, &[3], "y");
    let sum = x + y;
    // The error is sticky: visible at once and from build.
    let early = b.first_error().unwrap_err();
    let err = b.build(sum).unwrap_err();
    assert_eq!(err, early);
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.code().raw(), 3);
    assert!(err.message().contains("add"), "message should name the op: {err}");
    assert!(err.to_string().starts_with("INVALID_ARGUMENT: "), "{err}");
    // The error is a std error usable with `?` into Box<dyn Error>.
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(boxed.to_string().contains("add"));
}

#[test]
fn an_op_of_another_builder_is_an_invalid_argument() {
    let first = Builder::new("first").unwrap();
    let second = Builder::new("second").unwrap();
    let x = first.parameter(0, ElementType::F32, &[], "x");
    let y = second.parameter(0, ElementType::F32, &[], "y");
    let sum = second.add(x, y);
    let err = second.build(sum).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    for needle in ["kiln_op_add: operand 'lhs'", "builder 'first'", "not of builder 'second'"] {
        assert!(err.message().contains(needle), "expected {needle:?} in: {err}");
    }
    let err = first.build(y).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("kiln_builder_build: argument 'root'"), "{err}");
    assert_eq!(first.build(x).unwrap().parameter_count().unwrap(), 1);
}

#[test]
fn operand_precision_reaches_the_module() {
    let b = Builder::new("precision").unwrap();
    let x = b.parameter(0, ElementType::F32, &[2, 3], "x");
    let w = b.parameter(1, ElementType::F32, &[3, 4], "w");
    let product = b.set_precision(b.dot(x, w), Precision::Highest, Precision::Default);
    let text = b.build(product).unwrap().to_hlo_text().unwrap();
    assert!(text.contains("operand_precision={highest,default}"), "{text}");
    let sum = x + x;
    b.set_precision(sum, Precision::High, Precision::High);
    let err = b.first_error().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("only dot and convolution"), "{err}");
}

#[test]
fn fft_reaches_the_module_and_runs() {
    let b = Builder::new("fft").unwrap();
    let x = b.parameter(0, ElementType::F32, &[2, 8], "x");
    let spectrum = b.fft(x, FftType::Rfft, &[8]);
    let back = b.fft(spectrum, FftType::Irfft, &[8]);
    let computation = b.build(back).unwrap();
    let text = computation.to_hlo_text().unwrap();
    assert!(text.contains("fft_type=RFFT, fft_length={8}"), "{text}");
    assert!(text.contains("fft_type=IRFFT, fft_length={8}"), "{text}");
    let client = Client::new().unwrap();
    let exe = client.compile(&computation).unwrap();
    let signal: Vec<f32> = (0..16).map(|i| i as f32 * 0.5 - 3.0).collect();
    let input = client.buffer_from_slice(&signal, &[2, 8]).unwrap();
    let out = exe.execute(&[&input]).unwrap();
    let result = out[0].to_vec::<f32>().unwrap();
    for (got, want) in result.iter().zip(&signal) {
        assert!((got - want).abs() < 1e-5, "{result:?} vs {signal:?}");
    }
    let c = Builder::new("fft_of_reals").unwrap();
    let y = c.parameter(0, ElementType::F32, &[8], "y");
    c.fft(y, FftType::Fft, &[8]);
    let err = c.first_error().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("fft: FFT needs a complex"), "{err}");
}

#[test]
fn two_threads_run_one_executable() {
    let client = Client::new().unwrap();
    let exe = client.compile(&build_mlp()).unwrap();
    let weights = [
        client.buffer_from_slice(&W1, &[3, 4]).unwrap(),
        client.buffer_from_slice(&B1, &[4]).unwrap(),
        client.buffer_from_slice(&W2, &[4, 2]).unwrap(),
        client.buffer_from_slice(&B2, &[2]).unwrap(),
    ];
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let (client, exe, weights) = (&client, &exe, &weights);
                s.spawn(move || {
                    for i in 0..200 {
                        let x: Vec<f32> = X.iter().map(|v| v * (t + 1) as f32 + i as f32 * 0.01).collect();
                        let xb = client.buffer_from_slice(&x, &[2, 3]).unwrap();
                        let mut args = vec![&xb];
                        args.extend(weights.iter());
                        let got = exe.execute(&args).unwrap()[0].to_vec::<f32>().unwrap();
                        let want = reference(&x);
                        assert!(close(&got, &want, 1e-5), "thread {t} iteration {i}: {got:?} vs {want:?}");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn buffers_check_element_type_and_shape() {
    let client = Client::new().unwrap();
    let b = client.buffer_from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    assert_eq!(b.element_type().unwrap(), ElementType::S32);
    assert_eq!(b.dims().unwrap(), [2, 3]);
    assert_eq!(b.byte_size().unwrap(), 24);
    assert_eq!(b.to_vec::<i32>().unwrap(), [1, 2, 3, 4, 5, 6]);
    assert_eq!(b.to_vec::<f32>().unwrap_err().code(), Code::InvalidArgument);
    // Element count that does not match the dims: refused by the library.
    let err = client.buffer_from_slice(&[1.0f32, 2.0], &[3]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let p = client.buffer_from_slice(&[true, false], &[2]).unwrap();
    assert_eq!(p.to_vec::<bool>().unwrap(), [true, false]);
}

#[test]
fn common_ops_and_hlo_text_round_trip() {
    let b = Builder::new("ops").unwrap();
    let x = b.parameter(0, ElementType::F32, &[2, 3], "x");
    let t = b.transpose(x, &[1, 0]); // [3,2]
    let r = b.reshape(t, &[6]);
    let s = b.slice(r, &[1], &[5], &[1]); // 4 elements
    let c = b.concat_in_dim(&[s, b.constant(&[10.0f32, 20.0], &[2])], 0); // 6
    let add = b.computation_sum();
    let sum = b.reduce(c, b.constant_scalar(0.0f32), &add, &[0]);
    let i = b.convert(sum, ElementType::S32);
    let big = b.gt(i, b.constant_scalar(0i32));
    let out = b.tuple(&[c, b.select(big, i, b.neg(i))]);
    let computation = b.build(out).unwrap();
    let text = computation.to_hlo_text().unwrap();
    assert!(text.contains("transpose"), "{text}");
    let reparsed = kiln::Computation::from_hlo_text(&text).unwrap();

    let client = Client::new().unwrap();
    let exe = client.compile(&reparsed).unwrap();
    let xb = client.buffer_from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let res = exe.execute(&[&xb]).unwrap();
    assert_eq!(res.len(), 2);
    // transpose -> [1,4,2,5,3,6]; slice 1..5 -> [4,2,5,3]
    assert_eq!(res[0].to_vec::<f32>().unwrap(), [4.0, 2.0, 5.0, 3.0, 10.0, 20.0]);
    assert_eq!(res[1].to_vec::<i32>().unwrap(), [44]);
}

#[test]
fn hlo_parse_error_and_unknown_backend() {
    let err = kiln::Computation::from_hlo_text("HloModule broken\nENTRY e {").unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(Client::with_backend("no-such-backend").unwrap_err().code(), Code::NotFound);
    assert!(kiln::backends().unwrap().contains(&"interpreter"));
    assert!(!kiln::version().is_empty());
}

/// A scalar f32 addition, for reduce.
trait SumComputation {
    fn computation_sum(&self) -> kiln::Computation;
}

impl SumComputation for Builder {
    fn computation_sum(&self) -> kiln::Computation {
        let b = Builder::new("sum").unwrap();
        let l = b.parameter(0, ElementType::F32, &[], "l");
        let r = b.parameter(1, ElementType::F32, &[], "r");
        b.build(l + r).unwrap()
    }
}
