//! `CompileOptions::allow_unsafe_nan_math` reaches the library: devices that
//! keep NaN (the interpreter, lavapipe) compile with it and without it and
//! give NaN-exact results. The refusal on a device without float controls is
//! tested in C++ (tests/vulkan/nan_refusal_test.cc fakes such a device).

use kiln::{Builder, Client, CompileOptions, ElementType};

/// x != x: true exactly for NaN, what a driver assuming no NaN may fold.
fn nan_test() -> kiln::Computation {
    let b = Builder::new("nan_test").unwrap();
    let x = b.parameter(0, ElementType::F32, &[4], "x");
    b.build(b.ne(x, x)).unwrap()
}

fn check_opt_in(client: &Client) {
    let computation = nan_test();
    let x = client.buffer_from_slice(&[1.0f32, f32::NAN, f32::INFINITY, -0.0], &[4]).unwrap();
    for allow in [false, true] {
        let options = CompileOptions { allow_unsafe_nan_math: allow, ..Default::default() };
        let exe = client.compile_with(&computation, &options).unwrap();
        let got = exe.execute(&[&x]).unwrap()[0].to_vec::<bool>().unwrap();
        assert_eq!(got, [false, true, false, false], "allow_unsafe_nan_math: {allow}");
    }
}

#[test]
fn nan_opt_in_defaults_off() {
    assert!(!CompileOptions::default().allow_unsafe_nan_math);
}

#[test]
fn nan_opt_in_accepted_on_the_interpreter() {
    check_opt_in(&Client::with_backend("interpreter").unwrap());
}

#[test]
fn nan_opt_in_accepted_on_vulkan() {
    if !kiln::backends().unwrap().contains(&"vulkan") {
        eprintln!("skipped: this libkiln has no vulkan backend");
        return;
    }
    match Client::with_backend("vulkan") {
        Ok(client) => check_opt_in(&client),
        Err(error) => eprintln!("skipped: no vulkan device here: {error}"),
    }
}
