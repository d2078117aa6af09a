"""Runs one workload on one peer (numpy, torch, jax, iree, torch-cuda or jax-gpu) and
prints one JSON line.

benchmarks/compare starts this in a fresh process per (peer, workload), with the
thread-count environment set before anything is imported, and with the Python
that has the peer (Debian's for numpy/torch, benchmarks/.venv's for jax and iree; with
compare --gpu, the Python running compare for all of them).

  peer_worker.py --peer NAME --size full|quick --workload NAME --input-dir DIR
                 --output-dir DIR [--threads N] [--min-time SECONDS]
                 [--compile-only] [--reference-only]

Inputs are DIR/in0.npy, in1.npy, ...; the result leaves are written as
out0.npy, out1.npy, ... The JSON has best_us and median_us per call (and
compile_ms for jax and iree), or "error" when the peer cannot run the workload.

torch-cuda and jax-gpu run on the first GPU (torch device "cuda", jax.devices("gpu")[0])
with the inputs copied there before timing, in FP32 (TF32 off); a peer that
finds no GPU reports an error, never falls back to the CPU. Their JSON also has
"version" and "device". --reference-only (numpy) runs the workload once, untimed,
to write the reference answer.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import json
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "workloads"))

import catalog  # noqa: E402

WARMUP_CALLS = 2
MIN_SAMPLES = 3


def measure(call, min_time):
    """Per-call seconds (best, median) over calls filling `min_time`."""
    for _ in range(WARMUP_CALLS):
        call()
    samples = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        call()
        samples.append(time.perf_counter() - t0)
        if len(samples) >= MIN_SAMPLES and time.perf_counter() - start >= min_time:
            break
    samples.sort()
    n = len(samples)
    median = samples[n // 2] if n % 2 else (samples[n // 2 - 1] + samples[n // 2]) / 2
    return samples[0], median, n


# --- NumPy ---------------------------------------------------------------------


def numpy_program(workload, inputs):
    """A zero-argument callable running the workload, and one giving its result leaves."""
    import numpy as np

    kind = workload.kind
    if kind == "elementwise":
        (x,) = inputs
        y = np.empty_like(x)
        a, b, c = (np.float32(v) for v in (catalog.ELEMENTWISE_A, catalog.ELEMENTWISE_B, catalog.ELEMENTWISE_C))

        def run():
            np.multiply(x, a, out=y)
            np.add(y, b, out=y)
            np.tanh(y, out=y)
            np.multiply(y, c, out=y)
            np.add(y, x, out=y)
            return (y,)
        return run
    if kind == "softmax":
        (x,) = inputs

        def run():
            e = np.exp(x - x.max(axis=1, keepdims=True))
            e /= e.sum(axis=1, keepdims=True)
            return (e,)
        return run
    if kind == "rowsum":
        (x,) = inputs
        return lambda: (x.sum(axis=1),)
    if kind == "sgemm":
        a, b = inputs
        c = np.empty((a.shape[0], b.shape[1]), np.float32)
        return lambda: (np.matmul(a, b, out=c),)
    if kind == "conv":
        x, w = inputs
        batch, channels, height, width = x.shape
        out_channels = w.shape[0]
        w_matrix = np.ascontiguousarray(w.reshape(out_channels, -1))
        out = np.empty((batch, out_channels, height * width), np.float32)

        def run():
            # im2col per image, then one sgemm writing NCHW directly.
            padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
            windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # N,C,H,W,3,3
            for n in range(batch):
                columns = windows[n].transpose(0, 3, 4, 1, 2).reshape(channels * 9, height * width)
                np.matmul(w_matrix, columns, out=out[n])
            return (out.reshape(batch, out_channels, height, width),)
        return run
    if kind == "mlp":
        return numpy_mlp(inputs)
    if kind == "overhead":
        x, y = inputs

        def run():
            t = x + y
            t = t * x
            t = t - y
            t = np.maximum(t, x)
            t = np.minimum(t, y)
            t = -t
            t = np.abs(t)
            t = t * y
            t = t + x
            return (t - y,)
        return run
    if kind == "fft":
        # NumPy's pocketfft; before NumPy 2 it computes (and returns) complex128.
        (x,) = inputs
        transform = {"fft2": np.fft.fft2, "rfft": np.fft.rfft, "fft": np.fft.fft}[workload.params["transform"]]
        return lambda: (transform(x),)
    if kind == "linalg":
        return numpy_linalg(workload.params["function"], inputs)
    if kind == "cumsum":
        (x,) = inputs
        return lambda: (np.cumsum(x, axis=-1),)
    if kind == "transpose":
        # A contiguous copy: x.transpose alone is a view.
        (x,) = inputs
        permutation = workload.params["permutation"]
        return lambda: (np.ascontiguousarray(x.transpose(permutation)),)
    if kind == "colsum":
        (x,) = inputs
        return lambda: (x.sum(axis=0),)
    if kind == "bf16_gemm":
        # NumPy has no bf16: the inputs are rounded to bf16 (to nearest even)
        # once, outside the timing, and multiplied in f32, as the module does.
        a, b = (round_to_bfloat16(x) for x in inputs)
        c = np.empty((a.shape[0], b.shape[1]), np.float32)
        return lambda: (np.matmul(a, b, out=c),)
    if kind == "sort":
        (x,) = inputs
        if workload.params["variant"] == "argsort":
            return lambda: (np.argsort(x, axis=-1, kind="stable"),)
        return lambda: (np.sort(x, axis=-1),)
    if kind in NUMPY_ISSUE19:
        return NUMPY_ISSUE19[kind](workload, inputs)
    raise ValueError(f"no numpy program for {kind}")


def numpy_scatter_add(workload, inputs):
    # np.add.at is slow before NumPy 1.25; one weighted bincount per column is
    # NumPy's fast form of a scatter-add.
    import numpy as np

    x, indices, updates = inputs

    def run():
        sums = np.stack([np.bincount(indices, weights=updates[:, j], minlength=x.shape[0])
                         for j in range(updates.shape[1])], axis=1)
        return (x + sums.astype(np.float32),)
    return run


def numpy_gather_sum(workload, inputs):
    table, indices = inputs
    return lambda: (table[indices].sum(axis=0),)


def pool_windows(x):
    """The nine strided views of -inf-padded NHWC `x` that the 3x3 stride-2 pad-1
    max-pool takes its maximum over, in window order, and the padded array."""
    import numpy as np

    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    out_h, out_w = (x.shape[1] - 1) // 2 + 1, (x.shape[2] - 1) // 2 + 1
    views = [(i, j, padded[:, i:i + 2 * out_h - 1:2, j:j + 2 * out_w - 1:2, :]) for i in range(3) for j in range(3)]
    return views, padded


def numpy_maxpool(workload, inputs):
    import numpy as np

    (x,) = inputs

    def run():
        views, _ = pool_windows(x)
        result = views[0][2].copy()
        for _, _, view in views[1:]:
            np.maximum(result, view, out=result)
        return (result,)
    return run


def numpy_maxpool_grad(workload, inputs):
    # Each window's gradient of 1 goes to its first maximal element (as
    # select-and-scatter with a >= select does); overlapping windows add.
    import numpy as np

    (x,) = inputs

    def run():
        views, padded = pool_windows(x)
        pooled = views[0][2].copy()
        for _, _, view in views[1:]:
            np.maximum(pooled, view, out=pooled)
        taken = np.zeros(pooled.shape, bool)
        gradient = np.zeros(padded.shape, np.float32)
        out_h, out_w = pooled.shape[1], pooled.shape[2]
        for i, j, view in views:
            chosen = (view == pooled) & ~taken
            taken |= chosen
            gradient[:, i:i + 2 * out_h - 1:2, j:j + 2 * out_w - 1:2, :] += chosen
        return (gradient[:, 1:-1, 1:-1, :],)
    return run


def numpy_while_loop(workload, inputs):
    import numpy as np

    (x,) = inputs
    a, b = np.float32(0.999), np.float32(0.001)

    def run():
        c = x.copy()
        for _ in range(workload.params["iterations"]):
            c = c * a + b
        return (c,)
    return run


def numpy_rng_normal(workload, inputs):
    import numpy as np

    (seed,) = inputs
    return lambda: (np.random.default_rng(int(seed)).standard_normal(workload.params["count"], dtype=np.float32),)


def numpy_topk(workload, inputs):
    import numpy as np

    (x,) = inputs
    k = workload.params["k"]

    def run():
        candidates = np.argpartition(-x, k, axis=-1)[:, :k]
        values = np.take_along_axis(x, candidates, axis=-1)
        order = np.argsort(-values, axis=-1, kind="stable")
        return np.take_along_axis(values, order, axis=-1), np.take_along_axis(candidates, order, axis=-1)
    return run


def numpy_low_gemm(workload, inputs):
    # NumPy has no int8 or f16 BLAS: the operands (int8 values in [-64, 64), or
    # f32 rounded to f16 once, outside the timing) are multiplied by f32 SGEMM,
    # which is exact for the int8 ones (every partial sum is an integer below 2^24).
    import numpy as np

    a, b = inputs
    if workload.params["type"] == "int8":
        a, b = a.astype(np.float32), b.astype(np.float32)
        c = np.empty((a.shape[0], b.shape[1]), np.float32)
        return lambda: (np.matmul(a, b, out=c).astype(np.int32),)
    a, b = (x.astype(workload.params["type"]).astype(np.float32) for x in inputs)
    c = np.empty((a.shape[0], b.shape[1]), np.float32)
    return lambda: (np.matmul(a, b, out=c),)


def numpy_axis_sum(workload, inputs):
    (x,) = inputs
    return lambda: (x.sum(axis=workload.params["axis"]),)


def numpy_cumulative(workload, inputs):
    import numpy as np

    (x,) = inputs
    axis = workload.params.get("axis", -1)
    if workload.params["op"] == "sum":
        return lambda: (np.cumsum(x, axis=axis),)
    if workload.params["op"] == "prod":
        return lambda: (np.cumprod(x, axis=axis),)
    return lambda: (np.maximum.accumulate(x, axis=axis),)


def numpy_avgpool(workload, inputs):
    import numpy as np

    (x,) = inputs

    def run():
        # Zero padding, as the module's reduce-window add has.
        padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        out_h, out_w = (x.shape[1] - 1) // 2 + 1, (x.shape[2] - 1) // 2 + 1
        total = np.zeros((x.shape[0], out_h, out_w, x.shape[3]), np.float32)
        for i in range(3):
            for j in range(3):
                total += padded[:, i:i + 2 * out_h - 1:2, j:j + 2 * out_w - 1:2, :]
        return (total / np.float32(9),)
    return run


def numpy_take_along(workload, inputs):
    import numpy as np

    x, indices = inputs
    return lambda: (np.take_along_axis(x, indices, axis=1),)


def numpy_low_conv(workload, inputs):
    # NumPy has no low-precision convolution: the f32 convolution (numpy_program's
    # im2col) of the inputs rounded to bf16 or f16 once, outside the timing (their
    # products are exact in f32), or of the int8 values in [-64, 64) widened to
    # f32 (every partial sum is an integer below 2^24, so exact) and narrowed back.
    import numpy as np

    conv = dataclasses.replace(workload, kind="conv")
    kind = workload.params["type"]
    if kind == "int8":
        run = numpy_program(conv, [i.astype(np.float32) for i in inputs])
        return lambda: (run()[0].astype(np.int32),)
    if kind == "bfloat16":
        return numpy_program(conv, [round_to_bfloat16(i) for i in inputs])
    return numpy_program(conv, [i.astype(kind).astype(np.float32) for i in inputs])


NUMPY_ISSUE19 = {"scatter_add": numpy_scatter_add, "gather_sum": numpy_gather_sum, "maxpool": numpy_maxpool,
                 "maxpool_grad": numpy_maxpool_grad, "while_loop": numpy_while_loop,
                 "rng_normal": numpy_rng_normal, "topk": numpy_topk, "low_gemm": numpy_low_gemm,
                 "axis_sum": numpy_axis_sum, "cumulative": numpy_cumulative, "avgpool": numpy_avgpool,
                 "take_along": numpy_take_along, "low_conv": numpy_low_conv}


def numpy_linalg(function, inputs):
    """The linalg workloads through NumPy's LAPACK, with jax_programs' sign convention
    for eigh's and svd's vectors (the first row non-negative)."""
    import numpy as np

    def signs(vectors):
        return np.where(vectors[:1, :] < 0, -1, 1).astype(vectors.dtype)
    if function == "cholesky":
        return lambda: (np.linalg.cholesky(inputs[0]),)
    if function == "solve":
        return lambda: (np.linalg.solve(*inputs),)
    if function == "qr":
        return lambda: tuple(np.linalg.qr(inputs[0]))

    if function == "eigh":
        def run():
            w, v = np.linalg.eigh(inputs[0])
            return w, v * signs(v)
        return run
    if function == "svd":
        def run():
            u, s, vt = np.linalg.svd(inputs[0], full_matrices=False)
            sign = signs(u)
            return u * sign, s, vt * sign.T
        return run
    raise ValueError(f"no numpy program for linalg function {function}")


def round_to_bfloat16(x):
    """f32 values rounded to the nearest bf16 (ties to even), kept as f32."""
    import numpy as np

    bits = x.astype(np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def numpy_mlp(inputs):
    """relu, tanh, linear; mean cross-entropy; one SGD step: by hand."""
    import numpy as np

    x, labels, w1, b1, w2, b2, w3, b3 = inputs
    rate = np.float32(catalog.MLP_LEARNING_RATE)

    def run():
        z1 = x @ w1 + b1
        h1 = np.maximum(z1, 0)
        h2 = np.tanh(h1 @ w2 + b2)
        logits = h2 @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        log_probs = shifted - np.log(total)
        batch = x.shape[0]
        rows = np.arange(batch)
        loss = -log_probs[rows, labels].mean(dtype=np.float32)
        d_logits = exp / total
        d_logits[rows, labels] -= 1
        d_logits /= np.float32(batch)
        d_w3, d_b3 = h2.T @ d_logits, d_logits.sum(axis=0)
        d_z2 = (d_logits @ w3.T) * (1 - h2 * h2)
        d_w2, d_b2 = h1.T @ d_z2, d_z2.sum(axis=0)
        d_z1 = (d_z2 @ w2.T) * (z1 > 0)
        d_w1, d_b1 = x.T @ d_z1, d_z1.sum(axis=0)
        return (np.float32(loss), w1 - rate * d_w1, b1 - rate * d_b1, w2 - rate * d_w2, b2 - rate * d_b2,
                w3 - rate * d_w3, b3 - rate * d_b3)
    return run


# --- PyTorch -------------------------------------------------------------------


def torch_program(workload, inputs, threads, device="cpu"):
    import torch

    torch.set_num_threads(threads)
    tensors = [torch.from_numpy(i) for i in inputs]
    if device != "cpu":
        tensors = [t.to(device) for t in tensors]
    kind = workload.kind
    if kind == "elementwise":
        (x,) = tensors
        y = torch.empty_like(x)

        def run():
            torch.mul(x, catalog.ELEMENTWISE_A, out=y)
            y.add_(catalog.ELEMENTWISE_B).tanh_().mul_(catalog.ELEMENTWISE_C).add_(x)
            return (y,)
        return run, None
    if kind == "softmax":
        (x,) = tensors
        return (lambda: (torch.softmax(x, dim=1),)), None
    if kind == "rowsum":
        (x,) = tensors
        return (lambda: (x.sum(dim=1),)), None
    if kind == "sgemm":
        a, b = tensors
        c = torch.empty(a.shape[0], b.shape[1], device=a.device)
        return (lambda: (torch.mm(a, b, out=c),)), None
    if kind == "conv":
        # NCHW as the module has it, and channels_last (oneDNN's faster form):
        # the faster of the two is torch's time.
        x, w = tensors
        x_last = x.contiguous(memory_format=torch.channels_last)
        w_last = w.contiguous(memory_format=torch.channels_last)
        nchw = lambda: (torch.nn.functional.conv2d(x, w, padding=1),)  # noqa: E731
        last = lambda: (torch.nn.functional.conv2d(x_last, w_last, padding=1),)  # noqa: E731
        return nchw, last
    if kind == "mlp":
        x, labels, *params = tensors
        labels = labels.long()
        params = [p.clone().requires_grad_(True) for p in params]

        def run():
            w1, b1, w2, b2, w3, b3 = params
            h = torch.relu(x @ w1 + b1)
            h = torch.tanh(h @ w2 + b2)
            loss = torch.nn.functional.cross_entropy(h @ w3 + b3, labels)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                return (loss.detach(), *[p - catalog.MLP_LEARNING_RATE * g for p, g in zip(params, grads)])
        return run, None
    if kind == "overhead":
        x, y = tensors

        def run():
            t = x + y
            t = t * x
            t = t - y
            t = torch.maximum(t, x)
            t = torch.minimum(t, y)
            t = -t
            t = torch.abs(t)
            t = t * y
            t = t + x
            return (t - y,)
        return run, None
    if kind == "fft":
        (x,) = tensors
        transform = {"fft2": torch.fft.fft2, "rfft": torch.fft.rfft, "fft": torch.fft.fft}[workload.params["transform"]]
        return (lambda: (transform(x),)), None
    if kind == "linalg":
        return torch_linalg(torch, workload.params["function"], tensors), None
    if kind == "cumsum":
        (x,) = tensors
        return (lambda: (torch.cumsum(x, dim=-1),)), None
    if kind == "transpose":
        (x,) = tensors
        permutation = workload.params["permutation"]
        return (lambda: (x.permute(permutation).contiguous(),)), None
    if kind == "colsum":
        (x,) = tensors
        return (lambda: (x.sum(dim=0),)), None
    if kind == "bf16_gemm":
        # torch returns the bf16 product rounded to bf16 (no f32 output).
        a, b = (t.to(torch.bfloat16) for t in tensors)
        return (lambda: (torch.matmul(a, b).float(),)), None
    if kind == "sort":
        (x,) = tensors
        if workload.params["variant"] == "argsort":
            return (lambda: (torch.argsort(x, dim=-1, stable=True),)), None
        return (lambda: (torch.sort(x, dim=-1).values,)), None
    if kind in TORCH_ISSUE19:
        return TORCH_ISSUE19[kind](torch, workload, tensors), None
    raise ValueError(f"no torch program for {kind}")


def torch_maxpool_input(torch, x):
    """NHWC `x` as the NCHW-shaped channels_last view torch's pooling takes."""
    return x.permute(0, 3, 1, 2)


def torch_scatter_add(torch, workload, tensors):
    x, indices, updates = tensors
    indices = indices.long()
    return lambda: (x.index_add(0, indices, updates),)


def torch_gather_sum(torch, workload, tensors):
    table, indices = tensors
    indices = indices.long()
    return lambda: (torch.nn.functional.embedding(indices, table).sum(dim=0),)


def torch_maxpool(torch, workload, tensors):
    (x,) = tensors
    nchw = torch_maxpool_input(torch, x)
    return lambda: (torch.nn.functional.max_pool2d(nchw, 3, stride=2, padding=1).permute(0, 2, 3, 1),)


def torch_maxpool_grad(torch, workload, tensors):
    (x,) = tensors
    leaf = x.clone().requires_grad_(True)

    def run():
        pooled = torch.nn.functional.max_pool2d(torch_maxpool_input(torch, leaf), 3, stride=2, padding=1)
        (gradient,) = torch.autograd.grad(pooled.sum(), leaf)
        return (gradient,)
    return run


def torch_while_loop(torch, workload, tensors):
    (x,) = tensors

    def run():
        c = x.clone()
        for _ in range(workload.params["iterations"]):
            c = c * 0.999 + 0.001
        return (c,)
    return run


def torch_rng_normal(torch, workload, tensors):
    (seed,) = tensors
    generator = torch.Generator().manual_seed(int(seed))
    return lambda: (torch.randn(workload.params["count"], generator=generator),)


def torch_topk(torch, workload, tensors):
    (x,) = tensors
    return lambda: tuple(torch.topk(x, workload.params["k"], dim=-1))


def torch_low_gemm(torch, workload, tensors):
    a, b = tensors
    if workload.params["type"] == "int8":
        # torch's CPU int8 matmul returns int8 (wrapped): the operands are widened
        # to int32 once, outside the timing, and multiplied exactly in int32.
        a, b = a.to(torch.int32), b.to(torch.int32)
        return lambda: (torch.matmul(a, b),)
    a, b = a.to(torch.float16), b.to(torch.float16)
    # torch returns the f16 product rounded to f16 (no f32 output); builds
    # without a CPU f16 matmul fail here, and the row reads n/a with why.
    return lambda: (torch.matmul(a, b).float(),)


def torch_axis_sum(torch, workload, tensors):
    (x,) = tensors
    return lambda: (x.sum(dim=workload.params["axis"]),)


def torch_cumulative(torch, workload, tensors):
    (x,) = tensors
    axis = workload.params.get("axis", -1)
    if workload.params["op"] == "sum":
        return lambda: (torch.cumsum(x, dim=axis),)
    if workload.params["op"] == "prod":
        return lambda: (torch.cumprod(x, dim=axis),)
    return lambda: (torch.cummax(x, dim=axis).values,)


def torch_avgpool(torch, workload, tensors):
    (x,) = tensors
    nchw = torch_maxpool_input(torch, x)
    # count_include_pad: the padding counts as zeros, as in the module.
    return lambda: (torch.nn.functional.avg_pool2d(nchw, 3, stride=2, padding=1, count_include_pad=True)
                    .permute(0, 2, 3, 1),)


def torch_take_along(torch, workload, tensors):
    x, indices = tensors
    indices = indices.long()
    return lambda: (torch.take_along_dim(x, indices, dim=1),)


def torch_low_conv(torch, workload, tensors):
    kind = workload.params["type"]
    if kind == "int8":
        # torch has no CPU convolution of integers (outside its quantized
        # tensors): its f32 conv2d of the int8 values, exact as in NumPy's.
        x, w = (t.float() for t in tensors)
        return lambda: (torch.nn.functional.conv2d(x, w, padding=1).to(torch.int32),)
    # A bf16 or f16 convolution: torch rounds its result to the type (no f32
    # output); builds without a CPU f16 conv2d fail here, and the row reads n/a
    # with why.
    dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}[kind]
    x, w = (t.to(dtype) for t in tensors)
    return lambda: (torch.nn.functional.conv2d(x, w, padding=1).float(),)


TORCH_ISSUE19 = {"scatter_add": torch_scatter_add, "gather_sum": torch_gather_sum, "maxpool": torch_maxpool,
                 "maxpool_grad": torch_maxpool_grad, "while_loop": torch_while_loop,
                 "rng_normal": torch_rng_normal, "topk": torch_topk, "low_gemm": torch_low_gemm,
                 "axis_sum": torch_axis_sum, "cumulative": torch_cumulative, "avgpool": torch_avgpool,
                 "take_along": torch_take_along, "low_conv": torch_low_conv}


def torch_linalg(torch, function, tensors):
    """numpy_linalg through torch.linalg."""
    def signs(vectors):
        return torch.where(vectors[:1, :] < 0, -1.0, 1.0).to(vectors.dtype)
    if function == "cholesky":
        return lambda: (torch.linalg.cholesky(tensors[0]),)
    if function == "solve":
        return lambda: (torch.linalg.solve(*tensors),)
    if function == "qr":
        return lambda: tuple(torch.linalg.qr(tensors[0]))

    if function == "eigh":
        def run():
            w, v = torch.linalg.eigh(tensors[0])
            return w, v * signs(v)
        return run
    if function == "svd":
        def run():
            u, s, vt = torch.linalg.svd(tensors[0], full_matrices=False)
            sign = signs(u)
            return u * sign, s, vt * sign.T
        return run
    raise ValueError(f"no torch program for linalg function {function}")


def torch_cuda_program(workload, inputs, threads):
    """torch_program on the GPU, each call followed by torch.cuda.synchronize()
    so that its time is the GPU's work and not its launch; with the versions."""
    try:
        import torch
    except ImportError:
        raise RuntimeError(f"torch is not installed in {sys.executable}") from None
    if not torch.cuda.is_available():
        build = f"a CUDA {torch.version.cuda} build" if torch.version.cuda else "a CPU-only build"
        raise RuntimeError(f"torch {torch.__version__} ({build}, in {sys.executable}) finds no CUDA GPU: "
                           "torch.cuda.is_available() is False")
    # FP32 as Kiln computes it (torch's default for convolutions is TF32);
    # cuDNN picks its fastest convolution algorithm during the warm-up calls.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True

    def synchronized(run):
        def call():
            result = run()
            torch.cuda.synchronize()
            return result
        return call
    runs = [synchronized(r) for r in torch_program(workload, inputs, threads, "cuda") if r is not None]
    version = f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()})"
    return runs, {"version": version, "device": torch.cuda.get_device_name(0)}


# --- JAX -----------------------------------------------------------------------


def jax_gpu_device(jax):
    try:
        return jax.devices("gpu")[0]
    except RuntimeError as error:
        reason = str(error)
    try:  # why a GPU plugin that is installed did not start, where JAX kept it
        from jax._src import xla_bridge

        errors = getattr(xla_bridge, "_backend_errors", {})
        reason += "".join(f"; {name}: {errors[name]}" for name in ("cuda", "rocm") if name in errors)
    except ImportError:
        pass
    raise RuntimeError(f"JAX {jax.__version__} (in {sys.executable}) finds no GPU: {reason}")


def jax_program(workload, inputs, gpu=False):
    if gpu:
        try:
            import jax
        except ImportError:
            raise RuntimeError(f"jax is not installed in {sys.executable}") from None
        device = jax_gpu_device(jax)
        # FP32 as Kiln computes it (XLA's default on a GPU is TF32 for dots and convolutions).
        jax.config.update("jax_default_matmul_precision", "highest")
    else:
        import jax

        device = None
        jax.config.update("jax_platforms", "cpu")
    import jax_programs

    device_inputs = [jax.device_put(i, device) for i in inputs]
    jax.block_until_ready(device_inputs)
    t0 = time.perf_counter()
    lowered = jax.jit(jax_programs.function_for(workload), keep_unused=True).lower(*device_inputs)
    t1 = time.perf_counter()
    compiled = lowered.compile()
    t2 = time.perf_counter()

    def run():
        return jax.block_until_ready(compiled(*device_inputs))
    extra = {"lower_ms": (t1 - t0) * 1e3, "compile_ms": (t2 - t1) * 1e3}
    if gpu:
        import jaxlib

        extra.update(version=f"JAX {jax.__version__} (jaxlib {jaxlib.__version__})", device=device.device_kind)
    return run, extra


# --- IREE ----------------------------------------------------------------------


def iree_program(workload, inputs, threads):
    """The workload's JAX function exported as StableHLO (jax.jit(f).lower(...).as_text(),
    JAX's default dialect), compiled by iree-compile for llvm-cpu on the host CPU and
    run by the local-task driver on `threads` worker threads, inputs on the device
    before timing. compile_ms is the compile alone (lowering excluded), as for JAX."""
    try:
        import iree.compiler
        import iree.runtime
    except ImportError:
        raise RuntimeError(f"iree-base-compiler/iree-base-runtime are not installed in {sys.executable} "
                           "(benchmarks/install-peers)") from None
    import jax

    jax.config.update("jax_platforms", "cpu")
    import jax_programs

    t0 = time.perf_counter()
    stablehlo = jax.jit(jax_programs.function_for(workload), keep_unused=True).lower(*inputs).as_text()
    t1 = time.perf_counter()
    try:
        flatbuffer = iree.compiler.compile_str(stablehlo, target_backends=["llvm-cpu"], input_type="stablehlo",
                                               extra_args=["--iree-llvmcpu-target-cpu=host"])
    except iree.compiler.CompilerToolError as error:
        # The tool's report is long; its first error line says what failed.
        lines = [line for line in str(error).splitlines() if "error:" in line]
        raise RuntimeError("iree-compile failed: " + (lines[0].strip() if lines else "see iree-compile")) from None
    t2 = time.perf_counter()
    iree.runtime.flags.parse_flags(f"--task_topology_max_group_count={threads}")
    context = iree.runtime.SystemContext(config=iree.runtime.Config("local-task"))
    module = iree.runtime.VmModule.copy_buffer(context.instance, flatbuffer)
    context.add_vm_module(module)
    main = context.modules[module.name]["main"]
    device_inputs = [iree.runtime.asdevicearray(context.config.device, i) for i in inputs]

    # A synchronous call: it returns once the results are computed.
    def run():
        return main(*device_inputs)
    version = f"IREE {importlib.metadata.version('iree-base-compiler')}"
    return run, {"lower_ms": (t1 - t0) * 1e3, "compile_ms": (t2 - t1) * 1e3, "version": version}


def host_leaves(leaves):
    """IREE's device arrays copied to the host; other leaves as they are."""
    return [leaf.to_host() if hasattr(leaf, "to_host") else leaf for leaf in leaves]


# --- driver --------------------------------------------------------------------


def flatten(result):
    if isinstance(result, (tuple, list)):
        leaves = []
        for item in result:
            leaves += flatten(item)
        return leaves
    return [result]


def write_leaves(directory, result):
    import numpy as np

    directory.mkdir(parents=True, exist_ok=True)
    for i, leaf in enumerate(flatten(result)):
        value = leaf.detach().cpu().numpy() if hasattr(leaf, "detach") else np.asarray(leaf)
        np.save(directory / f"out{i}.npy", value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer", required=True, choices=["numpy", "torch", "jax", "iree", "torch-cuda", "jax-gpu"])
    parser.add_argument("--size", required=True, choices=catalog.SIZES)
    parser.add_argument("--workload", required=True)
    parser.add_argument("--input-dir", required=True, type=Path)
    parser.add_argument("--output-dir", required=True, type=Path)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--min-time", type=float, default=1.0)
    parser.add_argument("--compile-only", action="store_true",
                        help="jax, iree: lower and compile once, report compile_ms, run nothing")
    parser.add_argument("--reference-only", action="store_true",
                        help="numpy: run once, untimed, and write the result (the reference answer)")
    args = parser.parse_args()
    report = {"peer": args.peer, "workload": args.workload}
    try:
        import numpy as np

        workload = catalog.by_name(args.size)[args.workload]
        inputs = [np.load(args.input_dir / f"in{i}.npy") for i in range(len(workload.inputs))]
        extra = {}
        if args.reference_only:
            if args.peer != "numpy":
                raise ValueError("--reference-only is for numpy")
            write_leaves(args.output_dir, numpy_program(workload, inputs)())
            report["version"] = f"NumPy {np.__version__}"
            print(json.dumps(report))
            return 0
        if args.peer == "numpy":
            runs = [numpy_program(workload, inputs)]
        elif args.peer == "torch":
            runs = [r for r in torch_program(workload, inputs, args.threads) if r is not None]
        elif args.peer == "torch-cuda":
            runs, extra = torch_cuda_program(workload, inputs, args.threads)
        else:
            if args.peer == "iree":
                run, extra = iree_program(workload, inputs, args.threads)
            else:
                run, extra = jax_program(workload, inputs, gpu=args.peer == "jax-gpu")
            if args.compile_only:
                report.update(extra)
                print(json.dumps(report))
                return 0
            runs = [run]
        best = None
        for run in runs:
            timing = measure(run, args.min_time)
            if best is None or timing[1] < best[1][1]:
                best = (run, timing)
        run, (best_s, median_s, count) = best
        leaves = flatten(run())
        if args.peer == "jax-gpu":
            platforms = {d.platform for leaf in leaves for d in leaf.devices()}
            if platforms != {"gpu"}:
                raise RuntimeError(f"the results are on {sorted(platforms)}, not on the GPU")
        write_leaves(args.output_dir, host_leaves(leaves))
        report.update(extra)
        report.update({"best_us": best_s * 1e6, "median_us": median_s * 1e6, "iterations": count})
    except Exception as error:  # a peer that cannot run a workload is reported, not fatal
        # One line: why it failed (IREE's runtime errors run to a page of frames).
        reason = (str(error).strip().splitlines() or [""])[0]
        report["error"] = f"{type(error).__name__}: {reason}"
        report["traceback"] = traceback.format_exc(limit=3)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
