"""The workloads as JAX functions: what generate.py lowers to HLO text and what the
JAX peer of benchmarks/compare runs. Needs jax; see benchmarks/install-peers.

The MLP train step is the conformance corpus program itself (mlp_train_step in
tests/conformance/generate.py), imported rather than rewritten.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax

import catalog

CORPUS_GENERATOR = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "generate.py"


@functools.cache
def _corpus_generator():
    spec = importlib.util.spec_from_file_location("kiln_corpus_generate", CORPUS_GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    module.import_jax(enable_x64=False)
    return module


def elementwise(x):
    return jnp.tanh(catalog.ELEMENTWISE_A * x + catalog.ELEMENTWISE_B) * catalog.ELEMENTWISE_C + x


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def rowsum(x):
    return jnp.sum(x, axis=1)


def sgemm(a, b):
    return jnp.matmul(a, b)


def conv(x, w):
    return lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def overhead(x, y):
    # Ten elementwise ops; the point is the fixed cost of one execute.
    t = x + y
    t = t * x
    t = t - y
    t = jnp.maximum(t, x)
    t = jnp.minimum(t, y)
    t = -t
    t = jnp.abs(t)
    t = t * y
    t = t + x
    return t - y


def fft(workload: catalog.Workload):
    return {"fft2": jnp.fft.fft2, "rfft": jnp.fft.rfft, "fft": jnp.fft.fft}[workload.params["transform"]]


def first_row_signs(vectors):
    """+1 or -1 per column: the sign that makes the column's first element non-negative."""
    return jnp.where(vectors[:1, :] < 0, -1.0, 1.0).astype(vectors.dtype)


def eigh(a):
    w, v = jnp.linalg.eigh(a)
    return w, v * first_row_signs(v)


def svd(a):
    u, s, vt = jnp.linalg.svd(a, full_matrices=False)
    signs = first_row_signs(u)
    return u * signs, s, vt * signs.T


def linalg(workload: catalog.Workload):
    return {"cholesky": jnp.linalg.cholesky, "solve": jnp.linalg.solve, "qr": jnp.linalg.qr, "eigh": eigh,
            "svd": svd}[workload.params["function"]]


def cumsum(x):
    return jnp.cumsum(x, axis=-1)


def transpose(workload: catalog.Workload):
    return lambda x: jnp.transpose(x, workload.params["permutation"])


def colsum(x):
    return jnp.sum(x, axis=0)


def bf16_gemm(a, b):
    return jnp.matmul(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16), preferred_element_type=jnp.float32)


def sort(workload: catalog.Workload):
    return {"sort": lambda x: jnp.sort(x, axis=-1), "argsort": lambda x: jnp.argsort(x, axis=-1)}[
        workload.params["variant"]]


def scatter_add(x, indices, updates):
    return x.at[indices].add(updates)


def gather_sum(table, indices):
    return jnp.take(table, indices, axis=0).sum(axis=0)


# Max-pool 3x3 stride 2 over H and W of NHWC, padded by one on each side (as
# ResNet's stem and torch's padding=1; "SAME" would pad only the high side).
POOL_WINDOW, POOL_STRIDES, POOL_PADDING = (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (1, 1), (0, 0))


def maxpool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, POOL_WINDOW, POOL_STRIDES, POOL_PADDING)


def maxpool_grad(x):
    return jax.grad(lambda v: maxpool(v).sum())(x)


def while_loop(workload: catalog.Workload):
    iterations = workload.params["iterations"]
    return lambda c: lax.fori_loop(0, iterations, lambda i, v: v * 0.999 + 0.001, c)


def rng_normal(workload: catalog.Workload):
    count = workload.params["count"]
    return lambda seed: jax.random.normal(jax.random.key(seed), (count,), jnp.float32)


def topk(workload: catalog.Workload):
    return lambda x: lax.top_k(x, workload.params["k"])


def low_gemm(workload: catalog.Workload):
    if workload.params["type"] == "int8":
        return lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.int32)
    dtype = jnp.dtype(workload.params["type"])
    return lambda a, b: jnp.matmul(a.astype(dtype), b.astype(dtype), preferred_element_type=jnp.float32)


def axis_sum(workload: catalog.Workload):
    return lambda x: jnp.sum(x, axis=workload.params["axis"])


def cumulative(workload: catalog.Workload):
    axis = workload.params.get("axis", -1)
    return {"sum": lambda x: jnp.cumsum(x, axis=axis), "prod": lambda x: jnp.cumprod(x, axis=axis),
            "max": lambda x: lax.cummax(x, axis=axis % x.ndim)}[workload.params["op"]]


def avgpool(x):
    # Padding counts as zeros (divided by 9 everywhere), as flax's avg_pool does by default.
    return lax.reduce_window(x, 0.0, lax.add, POOL_WINDOW, POOL_STRIDES, POOL_PADDING) / 9.0


def take_along(x, indices):
    return jnp.take_along_axis(x, indices, axis=1)


def low_conv(workload: catalog.Workload):
    kind = workload.params["type"]
    result_type = jnp.int32 if kind == "int8" else jnp.float32

    def conv(x, w):
        if kind != "int8":
            x, w = x.astype(jnp.dtype(kind)), w.astype(jnp.dtype(kind))
        return lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"), preferred_element_type=result_type)
    conv.__name__ = {"bfloat16": "bf16_conv", "float16": "f16_conv", "int8": "int8_conv"}[kind]  # the module's name
    return conv


def hlo_function_for(workload: catalog.Workload):
    """The function whose HLO Kiln runs: the workload's own, or the forward loss of
    a workload whose gradient Kiln derives (benchmarks/compare differentiates it)."""
    if workload.params.get("derived_gradient"):
        return _corpus_generator().mlp_loss
    return function_for(workload)


def function_for(workload: catalog.Workload):
    """The JAX function computing `workload` on its inputs, in order."""
    simple = {"elementwise": elementwise, "softmax": softmax, "rowsum": rowsum, "sgemm": sgemm, "conv": conv,
              "cumsum": cumsum, "colsum": colsum, "bf16_gemm": bf16_gemm,
              "overhead": overhead, "scatter_add": scatter_add, "gather_sum": gather_sum, "maxpool": maxpool,
              "maxpool_grad": maxpool_grad, "avgpool": avgpool, "take_along": take_along}
    with_params = {"while_loop": while_loop, "rng_normal": rng_normal, "topk": topk, "low_gemm": low_gemm,
                   "axis_sum": axis_sum, "cumulative": cumulative, "low_conv": low_conv}
    if workload.kind in simple:
        return simple[workload.kind]
    if workload.kind in with_params:
        return with_params[workload.kind](workload)
    if workload.kind == "mlp":
        return _corpus_generator().mlp_train_step
    if workload.kind == "fft":
        return fft(workload)
    if workload.kind == "linalg":
        return linalg(workload)
    if workload.kind == "transpose":
        return transpose(workload)
    if workload.kind == "sort":
        return sort(workload)
    raise ValueError(f"no JAX function for workload kind {workload.kind!r}")
