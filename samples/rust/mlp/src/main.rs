//! A two-layer perceptron, y = relu(x·w1 + b1)·w2 + b2, built op by op with the
//! Kiln builder, compiled for the default backend and run on a small batch.
//!
//! Run from the repository root (after building libkiln into build/release):
//!   KILN_LIB_DIR=$PWD/build/release/capi cargo run --manifest-path samples/rust/mlp/Cargo.toml

use kiln::{Builder, Client, ElementType};

const BATCH: i64 = 4;
const INPUTS: i64 = 3;
const HIDDEN: i64 = 5;
const OUTPUTS: i64 = 2;

/// Deterministic "weights": a small sine pattern scaled by `scale`.
fn weights(n: i64, phase: f32, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|i| scale * (i as f32 * 0.7 + phase).sin())
        .collect()
}

fn main() -> kiln::Result<()> {
    // 1. Describe the computation.
    let b = Builder::new("mlp")?;
    let x = b.parameter(0, ElementType::F32, &[BATCH, INPUTS], "x");
    let w1 = b.parameter(1, ElementType::F32, &[INPUTS, HIDDEN], "w1");
    let b1 = b.parameter(2, ElementType::F32, &[HIDDEN], "b1");
    let w2 = b.parameter(3, ElementType::F32, &[HIDDEN, OUTPUTS], "w2");
    let b2 = b.parameter(4, ElementType::F32, &[OUTPUTS], "b2");
    let hidden = b.max(
        b.add_broadcast(b.dot(x, w1), b1, &[1]),
        b.constant_scalar(0.0f32),
    );
    let y = b.add_broadcast(b.dot(hidden, w2), b2, &[1]);
    let computation = b.build(y)?;

    // 2. Compile it for the default backend.
    let client = Client::new()?;
    println!(
        "kiln {} on backend '{}'",
        kiln::version(),
        client.backend_name()?
    );
    let mlp = client.compile(&computation)?;

    // 3. Copy inputs to the device, run, read the result back.
    let xs: Vec<f32> = (0..BATCH * INPUTS).map(|i| i as f32 / 4.0 - 1.0).collect();
    let args = [
        client.buffer_from_slice(&xs, &[BATCH, INPUTS])?,
        client.buffer_from_slice(&weights(INPUTS * HIDDEN, 0.0, 0.8), &[INPUTS, HIDDEN])?,
        client.buffer_from_slice(&weights(HIDDEN, 1.0, 0.1), &[HIDDEN])?,
        client.buffer_from_slice(&weights(HIDDEN * OUTPUTS, 2.0, 0.6), &[HIDDEN, OUTPUTS])?,
        client.buffer_from_slice(&weights(OUTPUTS, 3.0, 0.1), &[OUTPUTS])?,
    ];
    let results = mlp.execute(&args.iter().collect::<Vec<_>>())?;
    let y = results[0].to_vec::<f32>()?;

    for (row, out) in y.chunks(OUTPUTS as usize).enumerate() {
        let input = &xs[row * INPUTS as usize..(row + 1) * INPUTS as usize];
        println!("x = {input:>5.2?} -> y = {out:>8.4?}");
    }
    Ok(())
}
