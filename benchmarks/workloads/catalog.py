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
    # symmetric positive definite matrix (G G^T / n + I, G standard normal);
    # "integers": integers in [low, high) (indices, int8 operands, a seed).
    kind: str = "normal"
    scale: float = 1.0
    high: int = 0
    low: int = 0
    # Added to "normal" values (a cumulative product's factors sit near 1).
    offset: float = 0.0


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    title: str
    # What the peers implement: elementwise | softmax | rowsum | sgemm | conv | mlp | overhead | fft |
    # cumsum | transpose | colsum | bf16_gemm | sort | linalg | scatter_add | gather_sum | maxpool |
    # maxpool_grad | while_loop | rng_normal | topk | low_gemm | axis_sum | cumulative | avgpool | take_along |
    # low_conv.
    kind: str
    inputs: tuple
    # What bounds it, for the achieved-fraction column: "copy" (read + write
    # streams), "read" (read stream), "fma" (FP32 FMA peak) or "latency".
    # Results of kind rng_normal are random numbers from different generators:
    # compare checks their mean and spread, not their values.
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
    result += issue19_workloads(quick)
    result.append(Workload("overhead_10op", "10-op elementwise graph on f32[16] (per-execute overhead)", "overhead",
                           (Input((16,)), Input((16,))), "latency"))
    return result


def issue19_workloads(quick: bool) -> list[Workload]:
    """The ordinary workloads of issue 19 outside the first table: scatter and
    gather, pooling and its gradient, a small loop, random numbers, top-k and
    row argsort, int8 and f16 dots, reductions along each axis of a 3-D array,
    a 4-D transpose and cumulative products and maxima (reduce-windows)."""
    result = []
    targets, updates, width = (1024, 4096, 16) if quick else (100_000, 1 << 20, 16)
    result.append(Workload("scatter_add_f32", f"scatter-add of {updates} rows of {width} into {targets} rows "
                           "(x.at[idx].add) f32", "scatter_add",
                           (Input((targets, width)), Input((updates,), "int32", "integers", high=targets),
                            Input((updates, width))), "copy",
                           traffic_bytes=8 * targets * width + 4 * updates * (width + 1), flops=updates * width))
    vocabulary, embed, lookups = (1000, 64, 128) if quick else (50_000, 256, 4096)
    result.append(Workload("gather_embed_f32", f"embedding gather of {lookups} rows of a {vocabulary}x{embed} "
                           "table, summed f32", "gather_sum",
                           (Input((vocabulary, embed)), Input((lookups,), "int32", "integers", high=vocabulary)),
                           "read", traffic_bytes=4 * lookups * (embed + 1), flops=lookups * embed))
    pool_shape = (2, 16, 16, 8) if quick else (16, 112, 112, 64)
    pool_elements = math.prod(pool_shape)
    pooled_elements = pool_elements // 4
    pool_title = "x".join(map(str, pool_shape))
    result.append(Workload("maxpool_f32", f"max-pool 3x3 stride 2 pad 1 (reduce-window) NHWC {pool_title} f32",
                           "maxpool", (Input(pool_shape),), "copy",
                           traffic_bytes=4 * (pool_elements + pooled_elements), flops=9 * pooled_elements))
    result.append(Workload("maxpool_grad_f32", f"gradient of the max-pool's sum (select-and-scatter) NHWC "
                           f"{pool_title} f32", "maxpool_grad", (Input(pool_shape),), "copy",
                           traffic_bytes=8 * pool_elements, flops=9 * pooled_elements))
    result.append(Workload("while_tiny", "1000 iterations of a while loop, body c*0.999+0.001 on f32[4]",
                           "while_loop", (Input((4,)),), "latency", params={"iterations": 1000}))
    random_n = (1 << 16) if quick else (16 << 20)
    result.append(Workload("rng_normal_f32", f"{random_n} standard normal f32 from a key (threefry)", "rng_normal",
                           (Input((), "int32", "integers", high=1 << 20),), "copy", traffic_bytes=4 * random_n,
                           params={"count": random_n}))
    rows, cols = (64, 256) if quick else (4096, 1024)
    result.append(Workload("argsort_rows_f32", f"argsort along the last axis {rows}x{cols} f32 (stable, s32 "
                           "indices)", "sort", (Input((rows, cols)),), "latency", params={"variant": "argsort"}))
    result.append(Workload("topk_f32", f"top-16 of each row {rows}x{cols} f32 (values and s32 indices)", "topk",
                           (Input((rows, cols)),), "read", traffic_bytes=4 * rows * cols, params={"k": 16}))
    side = 128 if quick else 1024
    result.append(Workload(f"int8_gemm_{side}", f"int8 x int8 -> int32 matmul {side}^3", "low_gemm",
                           (Input((side, side), "int8", "integers", low=-64, high=64),
                            Input((side, side), "int8", "integers", low=-64, high=64)), "latency",
                           flops=2 * side**3, params={"type": "int8"}))
    result.append(Workload(f"f16_gemm_{side}", f"f16 x f16 -> f32 matmul {side}^3 (f32 inputs rounded to f16 in "
                           "the module)", "low_gemm", (Input((side, side)), Input((side, side))), "fma",
                           flops=2 * side**3, params={"type": "float16"}))
    cube = 32 if quick else 256
    for axis in range(3):
        result.append(Workload(f"sum_axis{axis}_f32", f"sum along axis {axis} of f32[{cube},{cube},{cube}]",
                               "axis_sum", (Input((cube,) * 3),), "read", traffic_bytes=4 * cube**3 + 4 * cube**2,
                               flops=cube**3, params={"axis": axis}))
    nchw = (2, 8, 7, 7) if quick else (32, 64, 56, 56)
    result.append(Workload("transpose4d_f32", f"NCHW->NHWC transpose of f32[{','.join(map(str, nchw))}]",
                           "transpose", (Input(nchw),), "copy", traffic_bytes=8 * math.prod(nchw),
                           params={"permutation": (0, 2, 3, 1)}))
    # Cumulative products and maxima along rows; shorter rows than cumsum_f32's,
    # as JAX lowers them to reduce-windows as long as the row.
    scan_rows, scan_cols = (64, 256) if quick else (4096, 1024)
    result.append(Workload("cumprod_f32", f"cumprod along the last axis {scan_rows}x{scan_cols} f32 (factors "
                           "near 1)", "cumulative", (Input((scan_rows, scan_cols), scale=0.01, offset=1.0),), "copy",
                           traffic_bytes=8 * scan_rows * scan_cols, flops=scan_rows * scan_cols,
                           params={"op": "prod"}))
    result.append(Workload("cummax_f32", f"cummax along the last axis {scan_rows}x{scan_cols} f32", "cumulative",
                           (Input((scan_rows, scan_cols)),), "copy", traffic_bytes=8 * scan_rows * scan_cols,
                           params={"op": "max"}))
    # More of the same families at other shapes and types: average pooling (a
    # reduce-window add), a cumulative sum down the columns, a gather along rows
    # (take_along_axis) and a bf16 convolution with f32 results.
    result.append(Workload("avgpool_f32", f"average-pool 3x3 stride 2 pad 1 (reduce-window add / 9) NHWC "
                           f"{pool_title} f32", "avgpool", (Input(pool_shape),), "copy",
                           traffic_bytes=4 * (pool_elements + pooled_elements), flops=9 * pooled_elements))
    result.append(Workload("cumsum_axis0_f32", f"cumsum along axis 0 of {scan_rows}x{scan_cols} f32", "cumulative",
                           (Input((scan_rows, scan_cols)),), "copy", traffic_bytes=8 * scan_rows * scan_cols,
                           flops=scan_rows * scan_cols, params={"op": "sum", "axis": 0}))
    picks = 16 if quick else 64
    result.append(Workload("take_along_rows_f32", f"take_along_axis of {picks} s32 indices per row of "
                           f"{rows}x{cols} f32", "take_along", (Input((rows, cols)),
                                                               Input((rows, picks), "int32", "integers", high=cols)),
                           "latency", traffic_bytes=8 * rows * picks))
    # Low-precision convolutions: the conv3x3 layer in bf16 and f16 with f32
    # results (f32 inputs converted in the module), and int8 with int32 results.
    batch, channels, image = (1, 16, 14) if quick else (8, 64, 56)
    conv_flops = 2 * batch * channels * image * image * channels * 9
    conv_title = f"conv 3x3 {channels}->{channels} {image}x{image} batch {batch} NCHW"
    for name, kind in (("bf16", "bfloat16"), ("f16", "float16")):
        result.append(Workload(f"{name}_conv3x3", f"{name} {conv_title}, f32 results (f32 inputs rounded to {name} in "
                               "the module)", "low_conv",
                               (Input((batch, channels, image, image)),
                                Input((channels, channels, 3, 3), scale=(9 * channels)**-0.5)), "fma",
                               flops=conv_flops, params={"type": kind}))
    result.append(Workload("int8_conv3x3", f"int8 {conv_title}, int32 results", "low_conv",
                           (Input((batch, channels, image, image), "int8", "integers", low=-64, high=64),
                            Input((channels, channels, 3, 3), "int8", "integers", low=-64, high=64)), "latency",
                           flops=conv_flops, params={"type": "int8"}))
    # A sort as large as issue 19's (16M keys), beside sort_f32's 2^20.
    large_sort = (1 << 14) if quick else (16 << 20)
    result.append(Workload("sort_large_f32", f"sort f32[{large_sort}]", "sort", (Input((large_sort,)),), "latency",
                           params={"variant": "sort"}))
    return result


def by_name(size: str) -> dict[str, Workload]:
    return {w.name: w for w in workloads(size)}
