"""Trains a classifier of handwritten digits with Kiln, from Python: the same job as
samples/c/train_digits.c.

The model's loss (a 64-64-10 perceptron with a ReLU and softmax cross-entropy over 8x8
images) is built with kiln.Builder, kiln.value_and_grad derives its gradient, and the
optimiser (Adam, or --optimizer sgd for SGD with momentum) is a Kiln computation that calls
the gradient and updates the weights, so each minibatch is one execution. One line per
epoch; a loss-curve PNG at the end. The data is scikit-learn's 8x8 digits, converted once
by samples/data/make_digits.py. Deterministic (fixed seed); exits 1 when the held-out
accuracy misses 95%.

    KILN_LIBRARY_PATH=build/release/capi PYTHONPATH=bindings/python/src \\
        python3 samples/python/train_digits/train_digits.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import frames  # noqa: E402 (the shared PNG writer, found through the line above)

import kiln  # noqa: E402

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data")
PIXELS, HIDDEN, CLASSES, BATCH = 64, 64, 10, 32
SHAPES = [(PIXELS, HIDDEN), (HIDDEN,), (HIDDEN, CLASSES), (CLASSES,)]  # w1, b1, w2, b2
NAMES = ["w1", "b1", "w2", "b2"]
TARGET = 0.95


def reducer(name: str) -> kiln.Computation:
    with kiln.Builder(name) as b:
        x, y = b.parameter(0, "f32", [], "a"), b.parameter(1, "f32", [], "b")
        return b.build(b.add(x, y) if name == "add" else b.max(x, y))


def forward(b: kiln.Builder, weights, images, labels, count: int, add, maximum):
    """The mean softmax cross-entropy over `count` images, and how many are right."""
    x = b.convert(images, "f32") * (1.0 / 16.0)  # grey levels 0..16 to [0, 1]
    hidden = b.max(b.add(x @ weights[0], weights[1], [1]), b.constant_f32(0.0))  # ReLU
    logits = b.add(hidden @ weights[2], weights[3], [1])
    row_max = b.reduce(logits, b.constant_f32(-np.inf), maximum, [1])
    shifted = b.sub(logits, row_max, [0])
    log_sum_exp = b.log(b.reduce(b.exp(shifted), b.constant_f32(0.0), add, [1]))
    one_hot = b.convert(b.eq(b.iota("s32", [count, CLASSES], 1), b.convert(labels, "s32"), [0]), "f32")
    picked = b.reduce(shifted * one_hot, b.constant_f32(0.0), add, [1])
    loss = b.reduce(log_sum_exp - picked, b.constant_f32(0.0), add, [0]) / float(count)
    # Right when the label's logit is its row's maximum (its shifted logit 0).
    correct = b.reduce(b.convert(b.ge(picked, b.constant_f32(0.0)), "f32"), b.constant_f32(0.0), add, [0])
    return loss, correct


def build_loss(count: int, with_accuracy: bool) -> kiln.Computation:
    """(w1, b1, w2, b2, images u8[count,64], labels u8[count]) -> loss, or (loss, correct)."""
    with reducer("add") as add, reducer("max") as maximum, kiln.Builder("loss") as b:
        weights = [b.parameter(i, "f32", shape, NAMES[i]) for i, shape in enumerate(SHAPES)]
        images = b.parameter(4, "u8", [count, PIXELS], "images")
        labels = b.parameter(5, "u8", [count], "labels")
        loss, correct = forward(b, weights, images, labels, count, add, maximum)
        return b.build(b.tuple([loss, correct]) if with_accuracy else loss)


def build_step(optimizer: str, value_and_grad: kiln.Computation) -> kiln.Computation:
    """(weights..., state..., images, labels) -> (weights'..., state'..., loss).

    Adam: m' = 0.9 m + 0.1 g, v' = 0.999 v + 0.001 g^2, t' = t + 1,
          w' = w - 0.003 (m' / (1 - 0.9^t')) / (sqrt(v' / (1 - 0.999^t')) + 1e-8)
    SGD:  u' = 0.9 u + g, w' = w - 0.05 u'
    """
    with kiln.Builder(f"{optimizer}_step") as b:
        weights = [b.parameter(i, "f32", shape, NAMES[i]) for i, shape in enumerate(SHAPES)]
        first = [b.parameter(4 + i, "f32", shape, "m_" + NAMES[i]) for i, shape in enumerate(SHAPES)]
        n = 8
        if optimizer == "adam":
            second = [b.parameter(8 + i, "f32", shape, "v_" + NAMES[i]) for i, shape in enumerate(SHAPES)]
            t = b.parameter(12, "f32", [], "t")
            n = 13
        images = b.parameter(n, "u8", [BATCH, PIXELS], "images")
        labels = b.parameter(n + 1, "u8", [BATCH], "labels")
        result = b.call(value_and_grad, [*weights, images, labels])
        grads = [b.get_tuple_element(result, 1 + i) for i in range(4)]
        if optimizer == "adam":
            t1 = t + 1.0
            c1 = 1.0 - b.pow(b.constant_f32(0.9), t1)
            c2 = 1.0 - b.pow(b.constant_f32(0.999), t1)
            m = [0.9 * mi + 0.1 * g for mi, g in zip(first, grads)]
            v = [0.999 * vi + 0.001 * (g * g) for vi, g in zip(second, grads)]
            new = [w - 0.003 * ((mi / c1) / (b.sqrt(vi / c2) + 1e-8)) for w, mi, vi in zip(weights, m, v)]
            outputs = [*new, *m, *v, t1]
        else:
            u = [0.9 * ui + g for ui, g in zip(first, grads)]
            outputs = [*[w - 0.05 * ui for w, ui in zip(weights, u)], *u]
        return b.build(b.tuple([*outputs, b.get_tuple_element(result, 0)]))


def write_curve(path: str, batch_losses, train_losses, test_losses, steps_per_epoch: int) -> None:
    """Batch losses (light blue), per-epoch training (blue) and held-out (orange) losses."""
    width, height, margin = 640, 360, 24
    rgb = np.full((height, width, 3), 255, np.uint8)
    steps, top = len(batch_losses), max(0.5, float(np.max(batch_losses)))

    def to_xy(step, value):
        x = margin + (width - 2 * margin) * np.asarray(step, float) / steps
        y = height - margin - (height - 2 * margin) * np.minimum(np.asarray(value, float), top) / top
        return x, y

    def line(steps_, values, colour, thick=1):
        xs, ys = to_xy(steps_, values)
        for i in range(1, len(xs)):
            n = int(abs(xs[i] - xs[i - 1]) + abs(ys[i] - ys[i - 1])) + 2
            px = np.rint(np.linspace(xs[i - 1], xs[i], n)).astype(int)
            py = np.rint(np.linspace(ys[i - 1], ys[i], n)).astype(int)
            for d in range(thick):
                rgb[np.clip(py + d, 0, height - 1), np.clip(px, 0, width - 1)] = colour

    for level in np.arange(0.5, top, 0.5):
        line([0, steps], [level, level], (225, 225, 225))
    epochs = np.arange(1, len(train_losses) + 1) * steps_per_epoch
    line(np.arange(steps), batch_losses, (170, 200, 235))
    line(epochs, train_losses, (31, 100, 180), 2)
    line(epochs, test_losses, (235, 120, 20), 2)
    line([0, steps], [0, 0], (60, 60, 60))
    frames.write_png(path, rgb)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    parser.add_argument("--epochs", type=int, default=20, choices=range(1, 201), metavar="N")
    parser.add_argument("--backend", help="a Kiln backend (default: the library's default, cpu)")
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--output", default="train_digits_loss.png")
    args = parser.parse_args()

    start = time.perf_counter()
    data = {
        name: np.load(os.path.join(args.data_dir, f"digits_{name}.npy"))
        for name in ("train_images", "train_labels", "test_images", "test_labels")
    }
    train_n, test_n = len(data["train_labels"]), len(data["test_labels"])
    rng = np.random.default_rng(0)
    with kiln.Client(args.backend) as client:
        with build_loss(BATCH, False) as loss, kiln.value_and_grad(loss, [0, 1, 2, 3]) as gradient:
            step = client.compile(build_step(args.optimizer, gradient))
        evaluate_train = client.compile(build_loss(train_n, True))
        evaluate_test = client.compile(build_loss(test_n, True))
        splits = {
            "train": [client.buffer(data["train_images"]), client.buffer(data["train_labels"])],
            "test": [client.buffer(data["test_images"]), client.buffer(data["test_labels"])],
        }
        # Glorot-uniform weights, zero biases and optimiser state.
        weights = [
            rng.uniform(-1, 1, shape).astype(np.float32) * np.float32(np.sqrt(6 / sum(shape)))
            if len(shape) == 2
            else np.zeros(shape, np.float32)
            for shape in SHAPES
        ]
        slots = 9 if args.optimizer == "adam" else 4
        state = [client.buffer(w) for w in weights]
        state += [client.buffer(np.zeros(SHAPES[i % 4], np.float32)) for i in range(slots - (slots == 9))]
        if slots == 9:
            state.append(client.buffer(np.float32(0)))
        about = (
            "Adam (learning rate 0.003)"
            if args.optimizer == "adam"
            else "SGD with momentum 0.9 (learning rate 0.05)"
        )
        print(
            f"Training a 64-64-10 classifier of 8x8 handwritten digits on {client.backend}"
            f" with Kiln's own gradients:\n{train_n} training images, {test_n} held out; {about},"
            f" batches of {BATCH}; the data, the computations and their compilation took"
            f" {time.perf_counter() - start:.2f} s."
        )
        steps_per_epoch = train_n // BATCH
        batch_losses, train_losses, test_losses = [], [], []
        start = time.perf_counter()
        for epoch in range(args.epochs):
            epoch_start = time.perf_counter()
            order = rng.permutation(train_n)
            for b in range(steps_per_epoch):
                rows = order[b * BATCH : (b + 1) * BATCH]
                results = step.execute([*state, data["train_images"][rows], data["train_labels"][rows]])
                for buffer in state:
                    buffer.close()
                state, loss_buffer = results[:-1], results[-1]
                batch_losses.append(float(loss_buffer.to_numpy()))
                loss_buffer.close()
            train_loss, train_correct = evaluate_train(*state[:4], *splits["train"])
            test_loss, test_correct = evaluate_test(*state[:4], *splits["test"])
            accuracy = float(test_correct) / test_n
            train_losses.append(float(np.mean(batch_losses[-steps_per_epoch:])))
            test_losses.append(float(test_loss))
            train_accuracy = float(train_correct) / train_n
            print(
                f"epoch {epoch + 1:2d}/{args.epochs}  loss {train_losses[-1]:.4f}"
                f"  held-out loss {test_losses[-1]:.4f}  accuracy: train {100 * train_accuracy:5.1f}%"
                f"  held-out {100 * accuracy:5.1f}%  ({1000 * (time.perf_counter() - epoch_start):.0f} ms)",
                flush=True,
            )
        for buffer in state + splits["train"] + splits["test"]:
            buffer.close()
        for executable in (step, evaluate_train, evaluate_test):
            executable.close()
    verdict = "reached" if accuracy >= TARGET else "MISSED"
    print(
        f"held-out accuracy {100 * accuracy:.1f}% after {args.epochs} epochs ({len(batch_losses)} steps) in"
        f" {time.perf_counter() - start:.2f} s: {verdict} the {100 * TARGET:.0f}% target"
    )
    write_curve(args.output, np.array(batch_losses), train_losses, test_losses, steps_per_epoch)
    print(f"wrote {args.output}: the loss per batch (light blue), and per epoch on the training (blue) and")
    print("held-out (orange) images")
    return 0 if accuracy >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
