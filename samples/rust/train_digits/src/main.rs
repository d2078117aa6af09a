//! Trains a classifier of handwritten digits with the Kiln Rust binding: the
//! same job as samples/c/train_digits.c.
//!
//! The model's loss (a 64-64-10 perceptron with a ReLU and softmax
//! cross-entropy over 8x8 images) is built with the builder,
//! `Computation::value_and_grad` derives its gradient, and the optimiser (Adam,
//! or `--optimizer sgd` for SGD with momentum) is a Kiln computation that calls
//! the gradient and updates the weights, so each minibatch is one execution.
//! One line per epoch; a loss-curve PNG at the end. The data is scikit-learn's
//! 8x8 digits, converted once by samples/data/make_digits.py. Deterministic;
//! exits 1 when the held-out accuracy misses 95%.
//!
//! Run from the repository root (after building libkiln into build/release):
//!   KILN_LIB_DIR=$PWD/build/release/capi cargo run --manifest-path samples/rust/train_digits/Cargo.toml

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use kiln::{Buffer, Builder, Client, Computation, ElementType, Op};

const PIXELS: i64 = 64;
const HIDDEN: i64 = 64;
const CLASSES: i64 = 10;
const BATCH: i64 = 32;
const TARGET: f64 = 0.95;
const WEIGHT_DIMS: [&[i64]; 4] = [&[PIXELS, HIDDEN], &[HIDDEN], &[HIDDEN, CLASSES], &[CLASSES]];
const WEIGHT_NAMES: [&str; 4] = ["w1", "b1", "w2", "b2"];

/// (a, b) -> a + b, or max(a, b), over f32 scalars.
fn reducer(maximum: bool) -> kiln::Result<Computation> {
    let b = Builder::new("reducer")?;
    let (x, y) = (
        b.parameter(0, ElementType::F32, &[], "a"),
        b.parameter(1, ElementType::F32, &[], "b"),
    );
    b.build(if maximum { b.max(x, y) } else { b.add(x, y) })
}

fn weight_parameters<'b>(b: &'b Builder, first: i64, prefix: &str) -> Vec<Op<'b>> {
    (0..4)
        .map(|i| {
            b.parameter(
                first + i,
                ElementType::F32,
                WEIGHT_DIMS[i as usize],
                &format!("{prefix}{}", WEIGHT_NAMES[i as usize]),
            )
        })
        .collect()
}

/// (w1, b1, w2, b2, images u8[count,64], labels u8[count]) -> the mean softmax
/// cross-entropy, or (loss, correct) when `with_accuracy`.
fn build_loss(count: i64, with_accuracy: bool) -> kiln::Result<Computation> {
    let (add, maximum) = (reducer(false)?, reducer(true)?);
    let b = Builder::new("loss")?;
    let w = weight_parameters(&b, 0, "");
    let images = b.parameter(4, ElementType::U8, &[count, PIXELS], "images");
    let labels = b.parameter(5, ElementType::U8, &[count], "labels");
    let zero = || b.constant_scalar(0.0f32);
    let x = b.mul(
        b.convert(images, ElementType::F32),
        b.constant_scalar(1.0f32 / 16.0),
    ); // 0..16 to [0, 1]
    let hidden = b.max(b.add_broadcast(b.dot(x, w[0]), w[1], &[1]), zero()); // ReLU
    let logits = b.add_broadcast(b.dot(hidden, w[2]), w[3], &[1]);
    let row_max = b.reduce(logits, b.constant_scalar(f32::NEG_INFINITY), &maximum, &[1]);
    let shifted = b.sub_broadcast(logits, row_max, &[0]);
    let log_sum_exp = b.log(b.reduce(b.exp(shifted), zero(), &add, &[1]));
    let classes = b.iota(ElementType::S32, &[count, CLASSES], 1);
    let one_hot = b.convert(
        b.eq_broadcast(classes, b.convert(labels, ElementType::S32), &[0]),
        ElementType::F32,
    );
    let picked = b.reduce(b.mul(shifted, one_hot), zero(), &add, &[1]);
    let loss = b.div(
        b.reduce(b.sub(log_sum_exp, picked), zero(), &add, &[0]),
        b.constant_scalar(count as f32),
    );
    if !with_accuracy {
        return b.build(loss);
    }
    // Right when the label's logit is its row's maximum (its shifted logit 0).
    let correct = b.reduce(
        b.convert(b.ge(picked, zero()), ElementType::F32),
        zero(),
        &add,
        &[0],
    );
    b.build(b.tuple(&[loss, correct]))
}

/// One training step: (weights..., state..., images, labels) -> (weights'...,
/// state'..., loss).
///   Adam: m' = 0.9 m + 0.1 g, v' = 0.999 v + 0.001 g^2, t' = t + 1,
///         w' = w - 0.003 (m' / (1 - 0.9^t')) / (sqrt(v' / (1 - 0.999^t')) + 1e-8)
///   SGD:  u' = 0.9 u + g, w' = w - 0.05 u'
fn build_step(adam: bool, value_and_grad: &Computation) -> kiln::Result<Computation> {
    let b = Builder::new("step")?;
    let c = |v: f32| b.constant_scalar(v);
    let w = weight_parameters(&b, 0, "");
    let first = weight_parameters(&b, 4, "m_");
    let (second, t, n) = if adam {
        (
            weight_parameters(&b, 8, "v_"),
            Some(b.parameter(12, ElementType::F32, &[], "t")),
            13,
        )
    } else {
        (Vec::new(), None, 8)
    };
    let images = b.parameter(n, ElementType::U8, &[BATCH, PIXELS], "images");
    let labels = b.parameter(n + 1, ElementType::U8, &[BATCH], "labels");
    let mut operands = w.clone();
    operands.extend([images, labels]);
    let result = b.call(value_and_grad, &operands);
    let grads: Vec<Op> = (0..4).map(|i| b.get_tuple_element(result, 1 + i)).collect();
    let mut outputs = Vec::new();
    if let Some(t) = t {
        let t1 = b.add(t, c(1.0));
        let c1 = b.sub(c(1.0), b.pow(c(0.9), t1));
        let c2 = b.sub(c(1.0), b.pow(c(0.999), t1));
        let m: Vec<Op> = (0..4)
            .map(|i| b.add(b.mul(c(0.9), first[i]), b.mul(c(0.1), grads[i])))
            .collect();
        let v: Vec<Op> = (0..4)
            .map(|i| {
                b.add(
                    b.mul(c(0.999), second[i]),
                    b.mul(c(0.001), b.mul(grads[i], grads[i])),
                )
            })
            .collect();
        for i in 0..4 {
            let update = b.div(b.div(m[i], c1), b.add(b.sqrt(b.div(v[i], c2)), c(1e-8)));
            outputs.push(b.sub(w[i], b.mul(c(0.003), update)));
        }
        outputs.extend(m);
        outputs.extend(v);
        outputs.push(t1);
    } else {
        let u: Vec<Op> = (0..4)
            .map(|i| b.add(b.mul(c(0.9), first[i]), grads[i]))
            .collect();
        outputs.extend((0..4).map(|i| b.sub(w[i], b.mul(c(0.05), u[i]))));
        outputs.extend(u);
    }
    outputs.push(b.get_tuple_element(result, 0));
    b.build(b.tuple(&outputs))
}

/// A small fixed-seed generator (xorshift64*), so every run is the same.
struct Random(u64);
impl Random {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Writes 8-bit RGB rows as a PNG (stored, uncompressed deflate blocks).
fn write_png(path: &Path, rgb: &[u8], width: usize, height: usize) -> std::io::Result<()> {
    fn crc32(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in data {
            crc ^= byte as u32;
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    let chunk = |out: &mut Vec<u8>, tag: &[u8], data: &[u8]| {
        out.extend((data.len() as u32).to_be_bytes());
        let mut tagged = tag.to_vec();
        tagged.extend(data);
        out.extend(&tagged);
        out.extend(crc32(&tagged).to_be_bytes());
    };
    let mut raw = Vec::new();
    for row in rgb.chunks(width * 3) {
        raw.push(0); // filter: none
        raw.extend(row);
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push((i + 1 == blocks.len()) as u8);
        zlib.extend((block.len() as u16).to_le_bytes());
        zlib.extend((!(block.len() as u16)).to_le_bytes());
        zlib.extend(*block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + byte as u32) % 65521;
        b = (b + a) % 65521;
    }
    zlib.extend(((b << 16) | a).to_be_bytes());
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend((width as u32).to_be_bytes());
    header.extend((height as u32).to_be_bytes());
    header.extend([8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &header);
    chunk(&mut png, b"IDAT", &zlib);
    chunk(&mut png, b"IEND", &[]);
    std::fs::write(path, png)
}

/// The batch losses (light blue) and each epoch's training (blue) and held-out
/// (orange) losses, from 0 up to the largest batch loss.
fn write_curve(
    path: &Path,
    batch: &[f64],
    train: &[f64],
    test: &[f64],
    steps_per_epoch: usize,
) -> std::io::Result<()> {
    const W: usize = 640;
    const H: usize = 360;
    const M: f64 = 24.0;
    let mut rgb = vec![255u8; W * H * 3];
    let top = batch.iter().cloned().fold(0.5, f64::max);
    let steps = batch.len() as f64;
    let xy = |s: f64, v: f64| {
        (
            M + (W as f64 - 2.0 * M) * s / steps,
            H as f64 - M - (H as f64 - 2.0 * M) * v.min(top) / top,
        )
    };
    let mut line = |s0: f64, v0: f64, s1: f64, v1: f64, colour: [u8; 3], thick: usize| {
        let ((x0, y0), (x1, y1)) = (xy(s0, v0), xy(s1, v1));
        let n = ((x1 - x0).abs() + (y1 - y0).abs()) as usize + 1;
        for i in 0..=n {
            let f = i as f64 / n as f64;
            let (x, y) = (
                (x0 + f * (x1 - x0)).round() as usize,
                (y0 + f * (y1 - y0)).round() as usize,
            );
            for d in 0..thick {
                if x < W && y + d < H {
                    rgb[3 * ((y + d) * W + x)..][..3].copy_from_slice(&colour);
                }
            }
        }
    };
    let mut level = 0.5;
    while level < top {
        line(0.0, level, steps, level, [225, 225, 225], 1);
        level += 0.5;
    }
    for i in 1..batch.len() {
        line(
            (i - 1) as f64,
            batch[i - 1],
            i as f64,
            batch[i],
            [170, 200, 235],
            1,
        );
    }
    for i in 1..train.len() {
        let (s0, s1) = (
            (i * steps_per_epoch) as f64,
            ((i + 1) * steps_per_epoch) as f64,
        );
        line(s0, train[i - 1], s1, train[i], [31, 100, 180], 2);
        line(s0, test[i - 1], s1, test[i], [235, 120, 20], 2);
    }
    line(0.0, 0.0, steps, 0.0, [60, 60, 60], 1);
    write_png(path, &rgb, W, H)
}

struct Options {
    adam: bool,
    epochs: usize,
    backend: Option<String>,
    data_dir: PathBuf,
    output: PathBuf,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        adam: true,
        epochs: 20,
        backend: None,
        data_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data"),
        output: PathBuf::from("train_digits_loss.png"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--optimizer" if value == "adam" || value == "sgd" => options.adam = value == "adam",
            "--epochs" => {
                options.epochs = value
                    .parse()
                    .ok()
                    .filter(|e| (1..=200).contains(e))
                    .ok_or("--epochs wants 1 to 200")?
            }
            "--backend" => options.backend = Some(value),
            "--data-dir" => options.data_dir = PathBuf::from(value),
            "--output" => options.output = PathBuf::from(value),
            _ => return Err(format!("bad argument {flag} {value}")),
        }
    }
    Ok(options)
}

fn train(options: &Options) -> kiln::Result<bool> {
    let start = Instant::now();
    let client = match &options.backend {
        Some(name) => Client::with_backend(name)?,
        None => Client::new()?,
    };
    let read = |name: &str| -> kiln::Result<(Vec<u8>, i64)> {
        let buffer = client.buffer_from_npy(
            options.data_dir.join(format!("digits_{name}.npy")),
            Some(ElementType::U8),
        )?;
        Ok((buffer.to_vec::<u8>()?, buffer.dims()?[0]))
    };
    let (train_images, train_n) = read("train_images")?;
    let (train_labels, _) = read("train_labels")?;
    let (test_images, test_n) = read("test_images")?;
    let (test_labels, _) = read("test_labels")?;

    // The computations: the loss, its gradient (Kiln's reverse mode), the
    // training step around it, and the evaluation of each split.
    let gradient = build_loss(BATCH, false)?.value_and_grad(&[0, 1, 2, 3])?;
    let step = client.compile(&build_step(options.adam, &gradient)?)?;
    let evaluate = [
        client.compile(&build_loss(train_n, true)?)?,
        client.compile(&build_loss(test_n, true)?)?,
    ];
    let splits = [
        [
            client.buffer_from_slice(&train_images, &[train_n, PIXELS])?,
            client.buffer_from_slice(&train_labels, &[train_n])?,
        ],
        [
            client.buffer_from_slice(&test_images, &[test_n, PIXELS])?,
            client.buffer_from_slice(&test_labels, &[test_n])?,
        ],
    ];

    // Glorot-uniform weights, zero biases and optimiser state.
    let mut random = Random(0x2545F4914F6CDD1D);
    let slots = if options.adam { 9 } else { 4 };
    let mut state: Vec<Buffer> = Vec::new();
    for i in 0..4 + slots {
        let dims: &[i64] = if options.adam && i == 4 + slots - 1 {
            &[]
        } else {
            WEIGHT_DIMS[i % 4]
        };
        let size = dims.iter().product::<i64>() as usize;
        let limit = if i < 4 && dims.len() == 2 {
            (6.0 / (dims[0] + dims[1]) as f64).sqrt()
        } else {
            0.0
        };
        let values: Vec<f32> = (0..size)
            .map(|_| {
                if limit > 0.0 {
                    ((2.0 * random.uniform() - 1.0) * limit) as f32
                } else {
                    0.0
                }
            })
            .collect();
        state.push(client.buffer_from_slice(&values, dims)?);
    }
    let about = if options.adam {
        "Adam (learning rate 0.003)"
    } else {
        "SGD with momentum 0.9 (learning rate 0.05)"
    };
    println!(
        "Training a 64-64-10 classifier of 8x8 handwritten digits on {} with Kiln's own gradients:",
        client.backend_name()?
    );
    println!("{train_n} training images, {test_n} held out; {about}, batches of {BATCH}; the data, the computations and their");
    println!("compilation took {:.2} s.", start.elapsed().as_secs_f64());

    let steps_per_epoch = (train_n / BATCH) as usize;
    let mut order: Vec<usize> = (0..train_n as usize).collect();
    let (mut batch_losses, mut train_losses, mut test_losses) =
        (Vec::new(), Vec::new(), Vec::new());
    let mut accuracy = 0.0;
    let start = Instant::now();
    for epoch in 0..options.epochs {
        let epoch_start = Instant::now();
        for i in (1..order.len()).rev() {
            let j = (random.uniform() * (i + 1) as f64) as usize;
            order.swap(i, j);
        }
        let mut sum = 0.0;
        for b in 0..steps_per_epoch {
            let rows = &order[b * BATCH as usize..(b + 1) * BATCH as usize];
            let images: Vec<u8> = rows
                .iter()
                .flat_map(|&r| {
                    train_images[r * PIXELS as usize..(r + 1) * PIXELS as usize]
                        .iter()
                        .copied()
                })
                .collect();
            let labels: Vec<u8> = rows.iter().map(|&r| train_labels[r]).collect();
            let x = client.buffer_from_slice(&images, &[BATCH, PIXELS])?;
            let y = client.buffer_from_slice(&labels, &[BATCH])?;
            let mut arguments: Vec<&Buffer> = state.iter().collect();
            arguments.extend([&x, &y]);
            let mut results = step.execute(&arguments)?;
            // The step's results are the next step's weights and state.
            let loss = results.pop().expect("the loss").to_vec::<f32>()?[0] as f64;
            state = results;
            batch_losses.push(loss);
            sum += loss;
        }
        let mut measured = [(0.0, 0.0); 2];
        for (s, split) in splits.iter().enumerate() {
            let mut arguments: Vec<&Buffer> = state[..4].iter().collect();
            arguments.extend(split.iter());
            let results = evaluate[s].execute(&arguments)?;
            let count = if s == 0 { train_n } else { test_n } as f64;
            measured[s] = (
                results[0].to_vec::<f32>()?[0] as f64,
                results[1].to_vec::<f32>()?[0] as f64 / count,
            );
        }
        accuracy = measured[1].1;
        train_losses.push(sum / steps_per_epoch as f64);
        test_losses.push(measured[1].0);
        println!(
            "epoch {:2}/{}  loss {:.4}  held-out loss {:.4}  accuracy: train {:5.1}%  held-out {:5.1}%  ({} ms)",
            epoch + 1,
            options.epochs,
            train_losses[epoch],
            measured[1].0,
            100.0 * measured[0].1,
            100.0 * accuracy,
            epoch_start.elapsed().as_millis()
        );
    }
    println!(
        "held-out accuracy {:.1}% after {} epochs ({} steps) in {:.2} s: {} the {:.0}% target",
        100.0 * accuracy,
        options.epochs,
        batch_losses.len(),
        start.elapsed().as_secs_f64(),
        if accuracy >= TARGET {
            "reached"
        } else {
            "MISSED"
        },
        100.0 * TARGET
    );
    match write_curve(&options.output, &batch_losses, &train_losses, &test_losses, steps_per_epoch) {
        Ok(()) => println!(
            "wrote {}: the loss per batch (light blue), and per epoch on the training (blue) and\nheld-out (orange) images",
            options.output.display()
        ),
        Err(e) => eprintln!("cannot write {}: {e}", options.output.display()),
    }
    Ok(accuracy >= TARGET)
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}\nusage: train_digits [--optimizer adam|sgd] [--epochs N] [--backend NAME] [--data-dir DIR] [--output FILE.png]");
            return ExitCode::from(2);
        }
    };
    match train(&options) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
