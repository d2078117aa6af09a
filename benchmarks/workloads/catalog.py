"""The benchmark workloads: names, shapes, inputs and the work each one does.

Standard library only, so that benchmarks/compare and the peer workers can read it
without JAX. The HLO text of each workload is written by generate.py into
full/NAME.hlo and quick/NAME.hlo (quick: small shapes for checking the plumbing on
slow backends such as the interpreter).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = ("full", "quick")

# The elementwise chain's constants: y = tanh(A*x + B)*C + x.
ELEMENTWISE_A, ELEMENTWISE_B, ELEMENTWISE_C = 0.5, 0.1, 2.0
# The MLP train step's learning rate (the conformance corpus program's).
MLP_LEARNING_RATE = 0.1


@dataclasses.dataclass(frozen=True)
class Input:
    shape: tuple
    dtype: str = "float32"
    # "normal": standard normal * scale; "complex": standard normal real and
    # imaginary parts, * scale; "labels": integers in [0, high); "spd": a
    # symmetric positive definite matrix (G G^T / n + I, G standard normal).
    kind: str = "normal"
    scale: float = 1.0
    high: int = 0


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    title: str
    # What the peers implement: elementwise | softmax | rowsum | sgemm | conv | mlp | overhead | fft |
    # cumsum | transpose | colsum | bf16_gemm | sort | linalg.
    kind: str
    inputs: tuple
    # What bounds it, for the achieved-fraction column: "copy" (read + write
    # streams), "read" (read stream), "fma" (FP32 FMA peak) or "latency".
    bound: str
    # Useful memory traffic (bytes) and floating-point work (FLOP) of one call.
    traffic_bytes: int = 0
    flops: int = 0
    params: dict = dataclasses.field(default_factory=dict)

    def hlo_path(self, size: str) -> Path:
        return HERE / size / f"{self.name}.hlo"


def mlp_inputs(batch, sizes):
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        params += [Input((fan_in, fan_out), scale=fan_in**-0.5), Input((fan_out,), scale=0.1)]
    return (Input((batch, sizes[0])), Input((batch,), "int32", "labels", high=sizes[-1]), *params)


def mlp_flops(batch, sizes):
    # Forward matmuls, then two matmuls per layer backward (the first layer's
    # input gradient is not needed but XLA-style programs may compute it).
    forward = sum(2 * batch * a * b for a, b in itertools.pairwise(sizes))
    return 3 * forward


def workloads(size: str) -> list[Workload]:
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}")
    quick = size == "quick"
    n = (1 << 16) if quick else (16 << 20)
    softmax_rows, softmax_cols = (64, 1024) if quick else (4096, 1024)
    rows, cols = (256, 256) if quick else (4096, 4096)
    gemm_sizes = (64, 128) if quick else (256, 512, 1024, 2048)
    batch, channels, image = (1, 16, 14) if quick else (8, 64, 56)
    wide_batch, wide_sizes = (32, [64, 32, 32, 10]) if quick else (256, [784, 512, 512, 10])

    result = [
        Workload("elementwise", f"tanh(a*x+b)*c+x, {n} f32", "elementwise", (Input((n,)),), "copy",
                 traffic_bytes=8 * n, flops=6 * n),
        Workload("softmax", f"softmax last axis {softmax_rows}x{softmax_cols}", "softmax",
                 (Input((softmax_rows, softmax_cols)),), "copy", traffic_bytes=8 * softmax_rows * softmax_cols),
        Workload("rowsum", f"row sum {rows}x{cols}", "rowsum", (Input((rows, cols)),), "read",
                 traffic_bytes=4 * rows * cols + 4 * rows, flops=rows * cols),
    ]
    for m in gemm_sizes:
        result.append(Workload(f"sgemm_{m}", f"sgemm {m}x{m}x{m}", "sgemm", (Input((m, m)), Input((m, m))), "fma",
                               flops=2 * m**3, params={"n": m}))
    conv_flops = 2 * batch * channels * image * image * channels * 9
    result.append(Workload("conv3x3", f"conv 3x3 {channels}->{channels} {image}x{image} batch {batch} NCHW",
                           "conv", (Input((batch, channels, image, image)),
                                    Input((channels, channels, 3, 3), scale=(9 * channels)**-0.5)),
                           "fma", flops=conv_flops))
    corpus_sizes = [6, 8, 8, 3]
    result.append(Workload("mlp_train_step", "MLP train step, corpus program (batch 4, 6-8-8-3)", "mlp",
                           mlp_inputs(4, corpus_sizes), "latency", flops=mlp_flops(4, corpus_sizes),
                           params={"sizes": corpus_sizes}))
    result.append(Workload("mlp_train_step_wide",
                           f"MLP train step, corpus program (batch {wide_batch}, "
                           f"{'-'.join(map(str, wide_sizes))})",
                           "mlp", mlp_inputs(wide_batch, wide_sizes), "fma",
                           flops=mlp_flops(wide_batch, wide_sizes), params={"sizes": wide_sizes}))
    # The same step with the gradient Kiln derives: NAME.hlo is the forward loss
    # (the corpus generator's mlp_loss); compare runs `kiln grad` on it and adds the
    # SGD step; the peers run the train step as above (JAX: its value_and_grad).
    result.append(Workload("mlp_train_step_kiln_grad",
                           f"MLP train step, gradient derived by kiln grad (batch {wide_batch}, "
                           f"{'-'.join(map(str, wide_sizes))})",
                           "mlp", mlp_inputs(wide_batch, wide_sizes), "fma",
                           flops=mlp_flops(wide_batch, wide_sizes),
                           params={"sizes": wide_sizes, "derived_gradient": True}))
    # FFTs: FLOPs by the usual convention, 5 N log2 N for a complex transform
    # of N points and half that for a real one.
    fft_side = 64 if quick else 512
    rfft_rows, rfft_cols = (64, 128) if quick else (4096, 1024)
    result.append(Workload("fft2_c64", f"2-D complex fft {fft_side}x{fft_side} c64", "fft",
                           (Input((fft_side, fft_side), "complex64", "complex"),), "fma",
                           flops=int(5 * fft_side**2 * math.log2(fft_side**2)), params={"transform": "fft2"}))
    result.append(Workload("rfft_f32", f"rfft of the last axis, {rfft_rows}x{rfft_cols} f32", "fft",
                           (Input((rfft_rows, rfft_cols)),), "fma",
                           flops=int(2.5 * rfft_rows * rfft_cols * math.log2(rfft_cols)),
                           params={"transform": "rfft"}))
    fft_rows, fft_cols = (64, 128) if quick else (2048, 1024)
    result.append(Workload("fft_c64", f"1-D complex fft of the last axis, {fft_rows} lines of {fft_cols} c64", "fft",
                           (Input((fft_rows, fft_cols), "complex64", "complex"),), "fma",
                           flops=int(5 * fft_rows * fft_cols * math.log2(fft_cols)), params={"transform": "fft"}))
    # Linear algebra in f32 (JAX lowers each to LAPACK custom calls): FLOPs by
    # LAPACK's usual counts where the work is fixed; eigh and svd iterate, so
    # they are timed only. eigh's and svd's vectors come out with the first
    # row non-negative (each vector's sign is arbitrary), so every peer's
    # result compares.
    side = 32 if quick else 256
    spd, square = Input((side, side), kind="spd"), Input((side, side))
    right_sides = Input((side, 16))
    result.append(Workload("cholesky_f32", f"cholesky {side}x{side} f32 (symmetric positive definite)", "linalg",
                           (spd,), "fma", flops=side**3 // 3, params={"function": "cholesky"}))
    result.append(Workload("solve_f32", f"solve {side}x{side} f32 with 16 right-hand sides (LU)", "linalg",
                           (square, right_sides), "fma", flops=2 * side**3 // 3 + 2 * 16 * side**2,
                           params={"function": "solve"}))
    result.append(Workload("qr_f32", f"qr {side}x{side} f32 (Q and R)", "linalg", (square,), "fma",
                           flops=8 * side**3 // 3, params={"function": "qr"}))
    result.append(Workload("eigh_f32", f"eigh {side}x{side} f32 (values and vectors)", "linalg", (spd,), "latency",
                           params={"function": "eigh"}))
    result.append(Workload("svd_f32", f"svd {side}x{side} f32 (U, S, Vt; not full_matrices)", "linalg", (square,),
                           "latency", params={"function": "svd"}))
    # Thunk-backed operations: a scan, transposes, a column reduction, a bf16
    # product and sorts (params say which axis, permutation or variant).
    permute_side = 32 if quick else 256
    bf16_side = 128 if quick else 1024
    sort_n = (1 << 12) if quick else (1 << 20)
    sort_rows, sort_cols = (64, 256) if quick else (1024, 1024)
    result.append(Workload("cumsum_f32", f"cumsum along the last axis {rows}x{cols} f32", "cumsum",
                           (Input((rows, cols)),), "copy", traffic_bytes=8 * rows * cols, flops=rows * cols))
    result.append(Workload("transpose_f32", f"transpose {rows}x{cols} f32", "transpose", (Input((rows, cols)),),
                           "copy", traffic_bytes=8 * rows * cols, params={"permutation": (1, 0)}))
    result.append(Workload("permute201_f32", f"(2,0,1) permute {permute_side}^3 f32", "transpose",
                           (Input((permute_side,) * 3),), "copy", traffic_bytes=8 * permute_side**3,
                           params={"permutation": (2, 0, 1)}))
    result.append(Workload("colsum", f"column sum {rows}x{cols}", "colsum", (Input((rows, cols)),), "read",
                           traffic_bytes=4 * rows * cols + 4 * cols, flops=rows * cols))
    result.append(Workload(f"bf16_gemm_{bf16_side}",
                           f"bf16 x bf16 -> f32 matmul {bf16_side}^3 (f32 inputs rounded to bf16 in the module)",
                           "bf16_gemm", (Input((bf16_side, bf16_side)), Input((bf16_side, bf16_side))), "fma",
                           flops=2 * bf16_side**3))
    result.append(Workload("sort_f32", f"sort f32[{sort_n}]", "sort", (Input((sort_n,)),), "latency",
                           params={"variant": "sort"}))
    result.append(Workload("argsort_f32", f"argsort f32[{sort_n}] (stable, s32 indices)", "sort",
                           (Input((sort_n,)),), "latency", params={"variant": "argsort"}))
    result.append(Workload("sort_rows_f32", f"sort along the last axis {sort_rows}x{sort_cols} f32", "sort",
                           (Input((sort_rows, sort_cols)),), "latency", params={"variant": "sort"}))
    result.append(Workload("overhead_10op", "10-op elementwise graph on f32[16] (per-execute overhead)", "overhead",
                           (Input((16,)), Input((16,))), "latency"))
    return result


def by_name(size: str) -> dict[str, Workload]:
    return {w.name: w for w in workloads(size)}
