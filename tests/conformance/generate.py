#!/usr/bin/env python3
"""Generates the conformance corpus: real programs exported from JAX as HLO text.

Each program is built in JAX, lowered with
`jax.jit(f, keep_unused=True).lower(*args).as_text(dialect="hlo")`, run in JAX on
fixed-seed inputs, and written to corpus/NAME/ as module.hlo, in0.npy, in1.npy, ...
(ENTRY's parameters in order) and out0.npy, out1.npy, ... (result leaves in order).

Usage:
  generate.py                 regenerate the whole corpus (removes stale programs)
  generate.py --only NAME...  regenerate only the named programs
  generate.py --list          list program names
  generate.py --stats         table of opcodes/attributes used by the corpus

Programs that need 64-bit types run in a child process with jax_enable_x64 set, so
the flag never changes how the other programs lower.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import itertools
import os
import re
import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

try:
    import numpy as np
except ImportError:  # --list and --stats need only the standard library
    np = None

HERE = Path(__file__).resolve().parent
CORPUS_DIR = HERE / "corpus"
OPCODE_HEADER = HERE.parent.parent / "core" / "opcode.h"


# ----------------------------------------------------------------------------
# Registry
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Forward:
    """The scalar loss a gradient program differentiates, over the program's own inputs.

    Written as forward.hlo (same parameters as module.hlo), forward_wrt.txt (the
    parameter numbers differentiated) and grad0.npy, grad1.npy, ... (JAX's
    gradient with respect to each, in that order), so that Kiln's autodiff can
    differentiate the forward program and be checked against JAX.
    """

    loss: Callable
    wrt: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Program:
    name: str
    # build(rng) -> (function, tuple of input arrays)
    build: Callable
    x64: bool
    forward: Forward | None = None


PROGRAMS: dict[str, Program] = {}


def program(name: str, x64: bool = False, forward: Forward | None = None):
    def register(build):
        if name in PROGRAMS:
            raise ValueError(f"duplicate program name {name!r}")
        PROGRAMS[name] = Program(name, build, x64, forward)
        return build

    return register


def register_simple(
    name: str, fn: Callable, make_inputs: Callable, x64: bool = False, forward: Forward | None = None
):
    program(name, x64, forward)(lambda rng: (fn, make_inputs(rng)))


# Input helpers: every program draws from its own generator seeded from its name.


def normal(rng, shape, dtype="float32", scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def uniform(rng, shape, low, high, dtype="float32"):
    return rng.uniform(low, high, shape).astype(dtype)


def ints(rng, shape, low, high, dtype="int32"):
    return rng.integers(low, high, shape, endpoint=False).astype(dtype)


def bools(rng, shape):
    return rng.integers(0, 2, shape).astype(np.bool_)


def with_specials(values):
    """Plants NaN, +-inf and -0.0 at the start of a float array (flat order)."""
    flat = values.reshape(-1).copy()
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=values.dtype)
    flat[: len(specials)] = specials
    return flat.reshape(values.shape)


# jax is imported only when programs are generated, so that --list and --stats work
# without it; program bodies look these names up when they run.
jax = jnp = lax = None


def import_jax(enable_x64: bool):
    global jax, jnp, lax
    import jax as jax_module

    jax_module.config.update("jax_enable_x64", enable_x64)
    jax_module.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp_module
    from jax import lax as lax_module

    jax, jnp, lax = jax_module, jnp_module, lax_module


# ----------------------------------------------------------------------------
# Writing one program
# ----------------------------------------------------------------------------

HLO_TYPE_OF_DTYPE = {
    "bool": "pred",
    "int8": "s8",
    "int16": "s16",
    "int32": "s32",
    "int64": "s64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
}


def normalize_hlo(text: str) -> str:
    """Removes bits that vary between runs or machines (source metadata)."""
    text = re.sub(r", metadata=\{[^{}]*\}", "", text)
    lines = [line.rstrip() for line in text.splitlines()]
    return "\n".join(lines).strip() + "\n"


def entry_parameter_types(hlo: str) -> list[str]:
    """Element types of ENTRY's parameters, ordered by parameter number."""
    match = re.search(r"^ENTRY [^\n]*\{\n(.*?)^\}", hlo, re.MULTILINE | re.DOTALL)
    if not match:
        raise RuntimeError("no ENTRY computation in lowered HLO")
    params = {}
    for line in match.group(1).splitlines():
        found = re.search(r"= ([a-z0-9]+)\[[^\]]*\](?:\{[^}]*\})? parameter\((\d+)\)", line)
        if found:
            params[int(found.group(2))] = found.group(1)
        elif "parameter(" in line:
            raise RuntimeError(f"ENTRY parameter that is not an array: {line.strip()}")
    if sorted(params) != list(range(len(params))):
        raise RuntimeError(f"ENTRY parameter numbers are not dense: {sorted(params)}")
    return [params[i] for i in range(len(params))]


def entry_result_count(hlo: str) -> int:
    """Number of result leaves ENTRY returns (a tuple root counts its elements)."""
    header = re.sub(r"/\*.*?\*/", "", hlo.splitlines()[0])
    result = header.split(")->", 1)[1]
    if not result.startswith("("):
        return 1
    depth, count = 0, 1
    for ch in result:
        depth += {"(": 1, ")": -1, "[": 1, "]": -1, "{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            break
        count += ch == "," and depth == 1
    return count


def write_program(prog: Program) -> None:
    rng = np.random.default_rng(zlib.crc32(prog.name.encode()))
    fn, args = prog.build(rng)
    args = tuple(jnp.asarray(a) for a in args)
    jitted = jax.jit(fn, keep_unused=True)
    hlo = normalize_hlo(jitted.lower(*args).as_text(dialect="hlo"))

    inputs = [np.asarray(a) for a in args]
    param_types = entry_parameter_types(hlo)
    if len(param_types) != len(inputs):
        raise RuntimeError(f"{prog.name}: ENTRY has {len(param_types)} parameters, {len(inputs)} inputs")
    for index, (array, hlo_type) in enumerate(zip(inputs, param_types)):
        if HLO_TYPE_OF_DTYPE[array.dtype.name] != hlo_type:
            raise RuntimeError(f"{prog.name}: input {index} is {array.dtype}, parameter is {hlo_type}")

    outputs = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(jitted(*args))]
    if len(outputs) != entry_result_count(hlo):
        raise RuntimeError(f"{prog.name}: {len(outputs)} outputs, ENTRY returns {entry_result_count(hlo)}")

    out_dir = CORPUS_DIR / prog.name
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    (out_dir / "module.hlo").write_text(hlo)
    for index, array in enumerate(inputs):
        np.save(out_dir / f"in{index}.npy", array, allow_pickle=False)
    for index, array in enumerate(outputs):
        np.save(out_dir / f"out{index}.npy", array, allow_pickle=False)
    if prog.forward is not None:
        write_forward(prog, args, out_dir)


def write_forward(prog: Program, args: tuple, out_dir: Path) -> None:
    """forward.hlo, forward_wrt.txt and grad*.npy of a gradient program (see Forward)."""
    loss, wrt = prog.forward.loss, prog.forward.wrt
    hlo = normalize_hlo(jax.jit(loss, keep_unused=True).lower(*args).as_text(dialect="hlo"))
    if len(entry_parameter_types(hlo)) != len(args):
        raise RuntimeError(f"{prog.name}: forward.hlo has other parameters than module.hlo")
    if entry_result_count(hlo) != 1 or np.ndim(loss(*args)) != 0:
        raise RuntimeError(f"{prog.name}: the forward function must return one scalar")
    gradients = jax.jit(jax.grad(loss, argnums=wrt))(*args)
    (out_dir / "forward.hlo").write_text(hlo)
    (out_dir / "forward_wrt.txt").write_text(" ".join(str(number) for number in wrt) + "\n")
    for index, array in enumerate(gradients):
        np.save(out_dir / f"grad{index}.npy", np.asarray(array), allow_pickle=False)


def run_phase(names: list[str], enable_x64: bool) -> int:
    import_jax(enable_x64)
    failures = 0
    for name in names:
        prog = PROGRAMS[name]
        if prog.x64 != enable_x64:
            raise RuntimeError(f"{name} belongs to the other phase")
        try:
            write_program(prog)
            print(f"  wrote {name}")
        except Exception as error:  # noqa: BLE001  (report every failing program, then fail the run)
            failures += 1
            print(f"  FAILED {name}: {type(error).__name__}: {error}", file=sys.stderr)
    return failures


# ----------------------------------------------------------------------------
# Statistics
# ----------------------------------------------------------------------------

INSTRUCTION = re.compile(r"^\s*(?:ROOT )?[\w.\-]+ = (.*)$")


def split_shape(rest: str) -> tuple[str, str]:
    """Splits 'SHAPE opcode(...)...' into shape and the remainder."""
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                return rest[: i + 1], rest[i + 1 :].lstrip()
    shape, _, remainder = rest.partition(" ")
    return shape, remainder


def known_opcodes() -> set[str]:
    return set(re.findall(r'^\s*V\(k\w+, "([\w\-]+)"', OPCODE_HEADER.read_text(), re.MULTILINE))


def print_stats() -> int:
    opcodes = collections.Counter()
    programs_using = collections.defaultdict(set)
    attributes = collections.Counter()
    custom_targets = collections.Counter()
    element_types = collections.Counter()
    modules = sorted(CORPUS_DIR.glob("*/module.hlo"))
    for module in modules:
        for line in module.read_text().splitlines():
            match = INSTRUCTION.match(line)
            if not match:
                continue
            shape, remainder = split_shape(match.group(1))
            opcode = re.match(r"[\w\-]+", remainder).group(0)
            opcodes[opcode] += 1
            programs_using[opcode].add(module.parent.name)
            for element_type in re.findall(r"\b([a-z]+\d*)\[", shape):
                element_types[element_type] += 1
            for key in re.findall(r", ([a-z_]+)=", remainder):
                attributes[f"{opcode}.{key}"] += 1
            window = re.search(r"window=\{([^}]*)\}", remainder)
            for key in re.findall(r"([a-z_]+)=", window.group(1)) if window else []:
                attributes[f"{opcode}.window.{key}"] += 1
            target = re.search(r'custom_call_target="([^"]*)"', remainder)
            if target:
                custom_targets[target.group(1)] += 1
            direction = re.search(r"direction=(\w+)(?:, type=(\w+))?", remainder)
            if opcode == "compare" and direction:
                attributes[f"compare.direction={direction.group(1)}"] += 1
                if direction.group(2):
                    attributes[f"compare.type={direction.group(2)}"] += 1

    size = sum(f.stat().st_size for f in CORPUS_DIR.rglob("*") if f.is_file())
    print(f"{len(modules)} programs, {size / 1e6:.2f} MB\n")
    print(f"{'opcode':<28}{'count':>7}{'programs':>10}")
    for opcode, count in sorted(opcodes.items()):
        print(f"{opcode:<28}{count:>7}{len(programs_using[opcode]):>10}")
    print(f"\n{'attribute':<44}{'count':>7}")
    for key, count in sorted(attributes.items()):
        print(f"{key:<44}{count:>7}")
    print("\nelement types: " + ", ".join(f"{t}={n}" for t, n in sorted(element_types.items())))
    if custom_targets:
        print("custom-call targets: " + ", ".join(f"{t}={n}" for t, n in sorted(custom_targets.items())))
    known = known_opcodes()
    missing = sorted(set(opcodes) - known)
    print("\nopcodes not in core/opcode.h: " + (", ".join(missing) if missing else "none"))
    for opcode in missing:
        print(f"  {opcode}: {', '.join(sorted(programs_using[opcode]))}")
    unused = sorted(known - set(opcodes))
    print("opcodes in core/opcode.h the corpus never uses: " + ", ".join(unused))
    return 0


# ----------------------------------------------------------------------------
# Programs: elementwise ops, one program per op so a failure names the op
# ----------------------------------------------------------------------------

SHAPE = (4, 6)


def positive(rng):
    return (uniform(rng, SHAPE, 0.1, 4.0),)


def any_real(rng):
    return (normal(rng, SHAPE, scale=2.0),)


def unit_interval(rng):
    return (uniform(rng, SHAPE, -0.95, 0.95),)


def real_with_specials(rng):
    return (with_specials(normal(rng, SHAPE, scale=3.0)),)


def halves(rng):
    # Values exactly on .5 boundaries exercise the rounding mode.
    return (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.2], np.float32),)


def register_unary_programs():
    unary = {
        "exp": (lambda x: jnp.exp(x), any_real),
        "log": (lambda x: jnp.log(x), positive),
        "log1p": (lambda x: jnp.log1p(x), positive),
        "expm1": (lambda x: jnp.expm1(x), any_real),
        "tanh": (lambda x: jnp.tanh(x), any_real),
        "logistic": (lambda x: lax.logistic(x), any_real),
        "sin": (lambda x: jnp.sin(x), any_real),
        "cos": (lambda x: jnp.cos(x), any_real),
        "tan": (lambda x: lax.tan(x), unit_interval),
        "sqrt": (lambda x: jnp.sqrt(x), positive),
        "rsqrt": (lambda x: lax.rsqrt(x), positive),
        "cbrt": (lambda x: lax.cbrt(x), any_real),
        "erf": (lambda x: lax.erf(x), any_real),
        "erf_inv": (lambda x: lax.erf_inv(x), unit_interval),
        "floor": (lambda x: jnp.floor(x), any_real),
        "ceil": (lambda x: jnp.ceil(x), any_real),
        "round_even": (lambda x: jnp.round(x), halves),
        "round_away": (lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), halves),
        "sign": (lambda x: jnp.sign(x), real_with_specials),
        "abs": (lambda x: jnp.abs(x), real_with_specials),
        "negate": (lambda x: -x, real_with_specials),
        "is_finite": (lambda x: jnp.isfinite(x), real_with_specials),
        "square": (lambda x: jnp.square(x), any_real),
        "reciprocal": (lambda x: jnp.reciprocal(x), positive),
        "sinh_asinh": (lambda x: (jnp.sinh(x), jnp.arcsinh(x)), any_real),
        "atan_acos": (lambda x: (jnp.arctan(x), jnp.arccos(x), jnp.arcsin(x)), unit_interval),
        "lgamma_digamma": (lambda x: (lax.lgamma(x), lax.digamma(x)), positive),
    }
    for name, (fn, make_inputs) in unary.items():
        register_simple(f"ew_{name}_f32", fn, make_inputs)


def two_real(rng):
    return normal(rng, SHAPE, scale=2.0), normal(rng, SHAPE, scale=2.0)


def two_with_nans(rng):
    a, b = two_real(rng)
    a.reshape(-1)[:3] = [np.nan, 1.0, np.nan]
    b.reshape(-1)[:3] = [1.0, np.nan, np.nan]
    return a, b


def base_and_exponent(rng):
    return uniform(rng, SHAPE, 0.2, 3.0), uniform(rng, SHAPE, -2.0, 2.0)


def register_binary_programs():
    binary = {
        "add": (lambda a, b: a + b, two_real),
        "subtract": (lambda a, b: a - b, two_real),
        "multiply": (lambda a, b: a * b, two_real),
        "divide": (lambda a, b: a / b, two_real),
        "max_nan": (lambda a, b: jnp.maximum(a, b), two_with_nans),
        "min_nan": (lambda a, b: jnp.minimum(a, b), two_with_nans),
        "pow": (lambda a, b: jnp.power(a, b), base_and_exponent),
        "atan2": (lambda a, b: jnp.arctan2(a, b), two_real),
        "rem": (lambda a, b: lax.rem(a, b), two_real),
        "fmod_floor": (lambda a, b: jnp.mod(a, b), two_real),
        "integer_pow": (lambda a, b: (a**3, lax.integer_pow(b, -2)), two_real),
        "compare_all": (
            lambda a, b: (a < b, a <= b, a > b, a >= b, a == b, a != b),
            two_with_nans,
        ),
        "select_clamp": (lambda a, b: (jnp.where(a > b, a, b), lax.clamp(-1.0, a, 1.0)), two_real),
        "nextafter": (lambda a, b: jnp.nextafter(a, b), two_real),
    }
    for name, (fn, make_inputs) in binary.items():
        register_simple(f"ew_{name}_f32", fn, make_inputs)


def register_integer_programs():
    def signed_pair(rng):
        a = ints(rng, SHAPE, -1000, 1000)
        b = ints(rng, SHAPE, 1, 50) * np.where(bools(rng, SHAPE), 1, -1).astype(np.int32)
        return a, b

    def shift_pair(rng, dtype):
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, SHAPE, endpoint=True).astype(dtype)
        # Amounts past the bit width are defined in HLO (all zeros or all sign bits).
        amounts = rng.integers(0, info.bits + 4, SHAPE).astype(dtype)
        return values, amounts

    register_simple(
        "int_arith_s32",
        lambda a, b: (a + b, a - b, a * b, lax.div(a, b), lax.rem(a, b), jnp.maximum(a, b), -a, jnp.abs(a)),
        signed_pair,
    )
    register_simple("int_floor_div_mod_s32", lambda a, b: (a // b, a % b), signed_pair)
    register_simple("int_sign_clamp_s32", lambda a, b: (jnp.sign(a), jnp.clip(a, -100, 100)), signed_pair)
    register_simple(
        "int_shifts_s32",
        lambda v, n: (lax.shift_left(v, n), lax.shift_right_arithmetic(v, n), lax.shift_right_logical(v, n)),
        lambda rng: shift_pair(rng, np.int32),
    )
    register_simple(
        "int_shifts_u8",
        lambda v, n: (lax.shift_left(v, n), lax.shift_right_logical(v, n), lax.shift_right_arithmetic(v, n)),
        lambda rng: shift_pair(rng, np.uint8),
    )
    register_simple(
        "int_bitwise_u32",
        lambda a, b: (a & b, a | b, a ^ b, ~a, lax.clz(a), lax.population_count(b)),
        lambda rng: shift_pair(rng, np.uint32),
    )
    register_simple(
        "int_clz_popcnt_s16",
        lambda a, b: (lax.clz(a), lax.population_count(a), a & b, a | b, a ^ b, ~b),
        lambda rng: shift_pair(rng, np.int16),
    )
    register_simple(
        "int_arith_u16",
        lambda a, b: (a + b, a - b, a * b, a // (b | 1), a % (b | 1), jnp.minimum(a, b), a > b),
        lambda rng: (ints(rng, SHAPE, 0, 65536, np.uint16), ints(rng, SHAPE, 0, 65536, np.uint16)),
    )
    register_simple(
        "int_wrap_s8",
        lambda a, b: (a + b, a * b, a - b, lax.div(a, b | 1)),
        lambda rng: (ints(rng, SHAPE, -128, 128, np.int8), ints(rng, SHAPE, -128, 128, np.int8)),
    )
    register_simple(
        "bool_logic",
        lambda a, b: (a & b, a | b, a ^ b, ~a, a == b, a != b, jnp.logical_and(a, ~b).sum()),
        lambda rng: (bools(rng, SHAPE), bools(rng, SHAPE)),
    )
    register_simple(
        "int_compare_u32",
        lambda a, b: (a < b, a >= b, jnp.maximum(a, b), jnp.where(a < b, a, b)),
        lambda rng: (ints(rng, SHAPE, 0, 2**32, np.uint32), ints(rng, SHAPE, 0, 2**32, np.uint32)),
    )


register_unary_programs()
register_binary_programs()
register_integer_programs()


# ----------------------------------------------------------------------------
# Programs: conversions, data movement, reductions, windows, convolutions, dots
# ----------------------------------------------------------------------------


def register_conversion_programs():
    def mixed_floats(rng):
        values = normal(rng, (24,), scale=50.0)
        values[:4] = [0.5, -0.5, 1.5, -2.5]
        return (values,)

    register_simple(
        "convert_f32_to_all",
        lambda x: tuple(
            x.astype(t)
            for t in (
                jnp.int32,
                jnp.int8,
                jnp.uint8,
                jnp.int16,
                jnp.uint32,
                jnp.float16,
                jnp.bfloat16,
                jnp.bool_,
            )
        ),
        lambda rng: (np.abs(mixed_floats(rng)[0]),),
    )
    register_simple(
        "convert_signed_f32_to_int",
        lambda x: (x.astype(jnp.int32), x.astype(jnp.int16), x.astype(jnp.int8)),
        lambda rng: (uniform(rng, (24,), -120.0, 120.0),),
    )
    register_simple(
        "convert_f32_to_int_saturating",
        lambda x: tuple(x.astype(t) for t in (jnp.int32, jnp.int8, jnp.uint8, jnp.uint32, jnp.int16)),
        lambda rng: (np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 300.7, -300.7, 2.5, -0.0], np.float32),),
    )
    register_simple(
        "convert_int_to_all",
        lambda x: tuple(
            x.astype(t)
            for t in (
                jnp.float32,
                jnp.float16,
                jnp.bfloat16,
                jnp.int8,
                jnp.uint8,
                jnp.uint16,
                jnp.uint32,
                jnp.bool_,
            )
        ),
        lambda rng: (ints(rng, (24,), -70000, 70000),),
    )
    register_simple(
        "convert_unsigned_to_float",
        lambda x: (x.astype(jnp.float32), x.astype(jnp.int32), x.astype(jnp.uint8)),
        lambda rng: (ints(rng, (24,), 0, 2**32, np.uint32),),
    )
    register_simple(
        "convert_bool_to_all",
        lambda x: tuple(x.astype(t) for t in (jnp.float32, jnp.int32, jnp.uint8, jnp.float16, jnp.bfloat16)),
        lambda rng: (bools(rng, (12,)),),
    )
    register_simple(
        "convert_half_types",
        lambda h, b: (
            h.astype(jnp.float32),
            b.astype(jnp.float32),
            h.astype(jnp.bfloat16),
            b.astype(jnp.float16),
            h.astype(jnp.int32),
            b.astype(jnp.int32),
        ),
        lambda rng: (normal(rng, (16,), np.float16, 8.0), normal(rng, (16,), jnp.bfloat16, 8.0)),
    )
    register_simple(
        "reduce_precision",
        lambda x: (
            lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
            lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7),
            lax.reduce_precision(x, exponent_bits=4, mantissa_bits=3),
        ),
        lambda rng: (with_specials(normal(rng, (32,), scale=1000.0)),),
    )
    register_simple(
        "bitcast_convert_same_width",
        lambda f, u: (
            lax.bitcast_convert_type(f, jnp.uint32),
            lax.bitcast_convert_type(u, jnp.float32),
            lax.bitcast_convert_type(f, jnp.int32),
        ),
        lambda rng: (normal(rng, (8,)), ints(rng, (8,), 0x3F000000, 0x40800000, np.uint32)),
    )
    register_simple(
        "bitcast_convert_change_width",
        lambda f, b: (lax.bitcast_convert_type(f, jnp.uint8), lax.bitcast_convert_type(b, jnp.float32)),
        lambda rng: (normal(rng, (3,)), ints(rng, (2, 4), 0, 256, np.uint8)),
    )


def register_data_movement_programs():
    register_simple(
        "iota_broadcast",
        lambda x: (
            lax.iota(jnp.int32, 6),
            lax.broadcasted_iota(jnp.float32, (3, 4), 1),
            jnp.broadcast_to(x, (2, 3, 4)),
            lax.broadcast_in_dim(x[:, 0], (3, 5), (0,)),
        ),
        lambda rng: (normal(rng, (3, 4)),),
    )
    register_simple(
        "transpose_reshape",
        lambda x: (jnp.transpose(x, (2, 0, 1)), x.reshape(6, 4), x.T.reshape(-1), jnp.swapaxes(x, 0, 1)),
        lambda rng: (normal(rng, (2, 3, 4)),),
    )
    register_simple(
        "slice_strided_rev",
        lambda x: (x[1:3, ::2], x[::-1], jnp.flip(x, axis=(0, 1)), x[:, 5:1:-2], lax.rev(x, (1,))),
        lambda rng: (normal(rng, (4, 6)),),
    )
    register_simple(
        "concatenate",
        lambda a, b: (jnp.concatenate([a, b, a], axis=0), jnp.concatenate([a, b], axis=1), jnp.stack([a, b])),
        lambda rng: (normal(rng, (2, 3)), normal(rng, (2, 3))),
    )
    register_simple(
        "pad_negative_interior",
        lambda x: (
            lax.pad(x, 0.0, ((1, 2, 1), (-1, 1, 0))),
            lax.pad(x, -5.0, ((-1, -1, 2), (2, -2, 1))),
            jnp.pad(x, ((1, 0), (2, 3))),
        ),
        lambda rng: (normal(rng, (3, 4)),),
    )
    register_simple(
        "pad_modes",
        lambda x: (jnp.pad(x, 2, mode="edge"), jnp.pad(x, 1, mode="reflect"), jnp.pad(x, 1, mode="wrap")),
        lambda rng: (normal(rng, (3, 4)),),
    )
    register_simple(
        "dynamic_slice_update",
        lambda x, i, u: (lax.dynamic_slice(x, (i, i + 1), (2, 3)), lax.dynamic_update_slice(x, u, (i, 4))),
        lambda rng: (normal(rng, (5, 6)), np.int32(2), normal(rng, (2, 3))),
    )
    register_simple(
        "dynamic_slice_clamped",
        lambda x, i: (
            lax.dynamic_slice(x, (i, -i), (3, 2)),
            lax.dynamic_update_slice(x, x[:2, :2] * 0, (i, i)),
        ),
        lambda rng: (normal(rng, (4, 5)), np.int32(7)),
    )
    register_simple(
        "select_broadcast_scalar",
        lambda p, a, s: (lax.select(p, a, jnp.full_like(a, s)), jnp.where(p, s, 0.0)),
        lambda rng: (bools(rng, (3, 4)), normal(rng, (3, 4)), np.float32(7.5)),
    )


def register_reduction_programs():
    register_simple(
        "reduce_sum_dims",
        lambda x: (x.sum(), x.sum(axis=0), x.sum(axis=(0, 2)), x.sum(axis=-1, keepdims=True), x.mean(axis=1)),
        lambda rng: (normal(rng, (3, 4, 5)),),
    )
    register_simple(
        "reduce_max_min_prod",
        lambda x: (x.max(axis=1), x.min(axis=(0, 1)), jnp.prod(x, axis=0), jnp.nanmax(x)),
        lambda rng: (uniform(rng, (3, 4, 2), 0.5, 1.5),),
    )
    register_simple(
        "reduce_int_bool",
        lambda i, b: (i.sum(axis=0), i.max(axis=1), i.min(), jnp.any(b, axis=0), jnp.all(b, axis=1), b.sum()),
        lambda rng: (ints(rng, (4, 5), -100, 100), bools(rng, (4, 5))),
    )
    register_simple(
        "reduce_variance_logsumexp",
        lambda x: (jnp.var(x, axis=0), jnp.std(x), jax.nn.logsumexp(x, axis=1)),
        lambda rng: (normal(rng, (6, 5)),),
    )
    register_simple(
        "argmax_argmin",
        lambda x, i: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), jnp.argmax(x), jnp.argmax(i, axis=0)),
        lambda rng: (with_specials(normal(rng, (5, 7))), ints(rng, (5, 7), 0, 3)),
    )
    register_simple(
        "reduce_variadic_custom",
        lambda x, y: lax.reduce(
            (x, y), (np.float32(0), np.float32(1)), lambda a, b: (a[0] + b[0], a[1] * b[1]), (1,)
        ),
        lambda rng: (normal(rng, (3, 4)), uniform(rng, (3, 4), 0.5, 1.5)),
    )


def register_window_programs():
    def images(rng):
        return (normal(rng, (2, 9, 9, 3)),)

    register_simple(
        "max_pool_strided",
        lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "VALID"),
        images,
    )
    register_simple(
        "avg_pool_same_padding",
        lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") / 9.0,
        images,
    )
    register_simple(
        "reduce_window_dilated",
        lambda x: lax.reduce_window(
            x,
            -jnp.inf,
            lax.max,
            (1, 2, 2, 1),
            (1, 1, 2, 1),
            ((0, 0), (1, 2), (0, 1), (0, 0)),
            base_dilation=(1, 2, 1, 1),
            window_dilation=(1, 2, 1, 1),
        ),
        images,
    )
    register_simple(
        "cumulative_ops",
        lambda x: (
            jnp.cumsum(x, axis=1),
            jnp.cumprod(x, axis=0),
            lax.cummax(x, axis=1),
            lax.cummin(x, axis=0),
            lax.cumsum(x, axis=1, reverse=True),
            lax.cumlogsumexp(x, axis=1),
        ),
        lambda rng: (uniform(rng, (4, 6), 0.5, 1.5),),
    )
    register_simple(
        "cumsum_int",
        lambda x: (jnp.cumsum(x), jnp.cumsum(x.reshape(3, 4), axis=0)),
        lambda rng: (ints(rng, (12,), -10, 10),),
    )


def nhwc_conv(x, w, **kwargs):
    return lax.conv_general_dilated(x, w, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kwargs)


def depthwise_conv_loss(w, x):
    return jnp.sum(nhwc_conv(x, w, window_strides=(1, 1), padding="SAME", feature_group_count=3) ** 2)


def register_convolution_programs():
    register_simple(
        "conv2d_same",
        lambda x, w: nhwc_conv(x, w, window_strides=(1, 1), padding="SAME"),
        lambda rng: (normal(rng, (2, 6, 6, 3)), normal(rng, (3, 3, 3, 4))),
    )
    register_simple(
        "conv2d_strided_valid_nchw",
        lambda x, w: lax.conv(x, w, (2, 2), "VALID"),
        lambda rng: (normal(rng, (2, 3, 7, 7)), normal(rng, (4, 3, 3, 3))),
    )
    register_simple(
        "conv2d_depthwise",
        lambda x, w: nhwc_conv(x, w, window_strides=(1, 1), padding="SAME", feature_group_count=4),
        lambda rng: (normal(rng, (1, 5, 5, 4)), normal(rng, (3, 3, 1, 8))),
    )
    register_simple(
        "conv2d_rhs_dilation",
        lambda x, w: nhwc_conv(x, w, window_strides=(1, 1), padding="VALID", rhs_dilation=(2, 2)),
        lambda rng: (normal(rng, (1, 8, 8, 2)), normal(rng, (3, 3, 2, 3))),
    )
    register_simple(
        "conv2d_transpose_lhs_dilation",
        lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        lambda rng: (normal(rng, (1, 4, 4, 3)), normal(rng, (3, 3, 3, 2))),
    )
    register_simple(
        "conv1d_padding_asymmetric",
        lambda x, w: lax.conv_general_dilated(x, w, (1,), ((2, 1),), dimension_numbers=("NWC", "WIO", "NWC")),
        lambda rng: (normal(rng, (2, 10, 3)), normal(rng, (4, 3, 5))),
    )
    register_simple(
        "conv2d_depthwise_weight_grad",
        lambda w, x: jax.grad(depthwise_conv_loss)(w, x),
        lambda rng: (normal(rng, (3, 3, 1, 6)), normal(rng, (2, 5, 5, 3))),
        forward=Forward(depthwise_conv_loss, (0,)),
    )
    register_simple(
        "conv_batch_group_count",
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"), batch_group_count=2
        ),
        lambda rng: (normal(rng, (4, 5, 5, 3)), normal(rng, (2, 2, 3, 4))),
    )
    register_simple(
        "conv3d",
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 2, 1), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")
        ),
        lambda rng: (normal(rng, (1, 4, 5, 4, 2)), normal(rng, (2, 3, 2, 2, 3))),
    )
    # Large enough (4224 outputs, 8 features a group) for Vulkan's library
    # convolution, which conv3d is too small for.
    register_simple(
        "conv3d_strided_dilated_grouped",
        lambda x, w: lax.conv_general_dilated(
            x,
            w,
            (2, 1, 2),
            ((1, 1), (0, 1), (2, 1)),
            rhs_dilation=(1, 2, 1),
            dimension_numbers=("NDHWC", "DHWIO", "NDHWC"),
            feature_group_count=2,
        ),
        lambda rng: (normal(rng, (1, 8, 12, 10, 8)), normal(rng, (3, 2, 3, 4, 16))),
    )


def register_dot_programs():
    register_simple(
        "matmul_f32",
        lambda a, b: a @ b,
        lambda rng: (normal(rng, (5, 7)), normal(rng, (7, 3))),
    )
    register_simple(
        "matvec_vecdot",
        lambda a, v: (a @ v, v @ v, jnp.outer(v, v)),
        lambda rng: (normal(rng, (4, 6)), normal(rng, (6,))),
    )
    register_simple(
        "dot_general_batched",
        lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
        lambda rng: (normal(rng, (3, 4, 5)), normal(rng, (3, 5, 2))),
    )
    register_simple(
        "dot_general_transposed_contraction",
        lambda a, b: lax.dot_general(a, b, (((0, 2), (2, 1)), ((), ()))),
        lambda rng: (normal(rng, (3, 4, 5)), normal(rng, (2, 5, 3))),
    )
    register_simple(
        "einsum_attention_like",
        lambda q, k: (
            jnp.einsum("bhqd,bhkd->bhqk", q, k),
            jnp.einsum("bhqd->bqhd", q),
            jnp.einsum("ij,ij->", q[0, 0], k[0, 0]),
        ),
        lambda rng: (normal(rng, (2, 2, 3, 4)), normal(rng, (2, 2, 3, 4))),
    )
    register_simple(
        "vmap_matmul",
        lambda a, b: jax.vmap(jnp.matmul)(a, b),
        lambda rng: (normal(rng, (4, 3, 5)), normal(rng, (4, 5, 2))),
    )
    register_simple(
        "matmul_int32",
        lambda a, b: jnp.matmul(a, b),
        lambda rng: (ints(rng, (3, 4), -20, 20), ints(rng, (4, 5), -20, 20)),
    )
    register_simple(
        "matmul_int8_to_int32",
        lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32),
        lambda rng: (ints(rng, (3, 8), -128, 128, np.int8), ints(rng, (8, 2), -128, 128, np.int8)),
    )


# ----------------------------------------------------------------------------
# Programs: small models as real code writes them
# ----------------------------------------------------------------------------


def mlp_forward(x, w1, b1, w2, b2, w3, b3):
    h = jax.nn.relu(x @ w1 + b1)
    h = jnp.tanh(h @ w2 + b2)
    return h @ w3 + b3


def mlp_params(rng, sizes):
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        params += [normal(rng, (fan_in, fan_out), scale=fan_in**-0.5), normal(rng, (fan_out,), scale=0.1)]
    return params


def cross_entropy(logits, labels):
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(jax.nn.one_hot(labels, logits.shape[-1]) * log_probs, axis=-1))


def mlp_loss(x, labels, *params):
    return cross_entropy(mlp_forward(x, *params), labels)


def mlp_train_step(x, labels, *params):
    loss, grads = jax.value_and_grad(lambda p: mlp_loss(x, labels, *p))(params)
    return loss, tuple(p - 0.1 * g for p, g in zip(params, grads))


def linear_regression_loss(x, y, w, b, *_optimizer_state):
    return jnp.mean((x @ w + b - y) ** 2)


def adam_step(x, y, w, b, m_w, m_b, v_w, v_b, step):
    loss, (g_w, g_b) = jax.value_and_grad(lambda p: linear_regression_loss(x, y, *p))((w, b))
    step = step + 1
    outs = [loss, step]
    for p, g, m, v in ((w, g_w, m_w, v_w), (b, g_b, m_b, v_b)):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        m_hat = m / (1 - 0.9 ** step.astype(jnp.float32))
        v_hat = v / (1 - 0.999 ** step.astype(jnp.float32))
        outs += [p - 1e-2 * m_hat / (jnp.sqrt(v_hat) + 1e-8), m, v]
    return tuple(outs)


def cnn_block(x, w, b, gamma, beta):
    y = nhwc_conv(x, w, window_strides=(1, 1), padding="SAME") + b
    y = jax.nn.relu(y)
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    mean = jnp.mean(y, axis=(0, 1, 2))
    var = jnp.var(y, axis=(0, 1, 2))
    return gamma * (y - mean) * lax.rsqrt(var + 1e-5) + beta


def cnn_inputs(rng):
    return (
        normal(rng, (2, 6, 6, 3)),
        normal(rng, (3, 3, 3, 4), scale=0.5),
        normal(rng, (4,), scale=0.1),
        uniform(rng, (4,), 0.5, 1.5),
        normal(rng, (4,), scale=0.1),
    )


def cnn_loss(x, w, b, gamma, beta):
    return jnp.sum(jnp.sin(cnn_block(x, w, b, gamma, beta)))


def cnn_grad(x, w, b, gamma, beta):
    return jax.grad(cnn_loss, argnums=(0, 1, 2, 3))(x, w, b, gamma, beta)


def layer_norm(x, scale, bias):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-6) * scale + bias


HEADS = 2


def attention_block(x, ln_scale, ln_bias, w_qkv, w_out, w_up, w_down, approximate_gelu=False, causal=False):
    batch, seq, dim = x.shape
    h = layer_norm(x, ln_scale, ln_bias)
    q, k, v = jnp.split(h @ w_qkv, 3, axis=-1)
    split_heads = lambda t: t.reshape(batch, seq, HEADS, dim // HEADS).transpose(0, 2, 1, 3)
    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(dim // HEADS).astype(np.float32)
    if causal:
        mask = jnp.tril(jnp.ones((seq, seq), bool))
        scores = jnp.where(mask, scores, -1e9)
    attended = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
    x = x + attended.transpose(0, 2, 1, 3).reshape(batch, seq, dim) @ w_out
    h = layer_norm(x, ln_scale, ln_bias)
    return x + jax.nn.gelu(h @ w_up, approximate=approximate_gelu) @ w_down


def attention_loss(x, *params):
    return jnp.sum(attention_block(x, *params, causal=True) ** 2)


def attention_inputs(rng, dtype="float32"):
    dim = 8
    arrays = (
        normal(rng, (2, 5, dim)),
        uniform(rng, (dim,), 0.5, 1.5),
        normal(rng, (dim,), scale=0.1),
        normal(rng, (dim, 3 * dim), scale=dim**-0.5),
        normal(rng, (dim, dim), scale=dim**-0.5),
        normal(rng, (dim, 2 * dim), scale=dim**-0.5),
        normal(rng, (2 * dim, dim), scale=0.25),
    )
    return tuple(a.astype(dtype) for a in arrays)


def activations_loss(x):
    return jnp.sum(jax.nn.gelu(x) + jax.nn.relu(x) + jax.nn.softplus(x) + jnp.tanh(x))


def embedding_loss(table, ids):
    return jnp.sum(jnp.tanh(table[ids]))


def register_model_programs():
    register_simple(
        "mlp_forward", mlp_forward, lambda rng: (normal(rng, (4, 6)), *mlp_params(rng, [6, 8, 8, 3]))
    )
    register_simple(
        "mlp_train_step_sgd",
        mlp_train_step,
        lambda rng: (normal(rng, (4, 6)), ints(rng, (4,), 0, 3), *mlp_params(rng, [6, 8, 8, 3])),
        forward=Forward(mlp_loss, (2, 3, 4, 5, 6, 7)),
    )
    register_simple(
        "linear_regression_adam",
        adam_step,
        lambda rng: (
            normal(rng, (8, 3)),
            normal(rng, (8, 2)),
            normal(rng, (3, 2)),
            np.zeros(2, np.float32),
            normal(rng, (3, 2), scale=0.01),
            np.zeros(2, np.float32),
            uniform(rng, (3, 2), 0, 0.01),
            np.zeros(2, np.float32),
            np.int32(3),
        ),
        forward=Forward(linear_regression_loss, (2, 3)),
    )
    register_simple("cnn_block_forward", cnn_block, cnn_inputs)
    register_simple("cnn_block_grad", cnn_grad, cnn_inputs, forward=Forward(cnn_loss, (0, 1, 2, 3)))
    register_simple("attention_block_gelu_erf", attention_block, attention_inputs)
    register_simple(
        "attention_block_gelu_tanh_causal",
        lambda *a: attention_block(*a, approximate_gelu=True, causal=True),
        attention_inputs,
    )
    register_simple(
        "attention_block_grad",
        lambda x, *p: jax.grad(lambda p: attention_loss(x, *p))(p),
        attention_inputs,
        forward=Forward(attention_loss, (1, 2, 3, 4, 5, 6)),
    )
    register_simple(
        "attention_block_bf16",
        lambda *a: attention_block(*a, approximate_gelu=True),
        lambda rng: attention_inputs(rng, jnp.bfloat16),
    )
    register_simple(
        "attention_block_f16",
        attention_block,
        lambda rng: attention_inputs(rng, np.float16),
    )
    register_simple(
        "softmax_layernorm",
        lambda x, s, b: (jax.nn.softmax(x, axis=-1), jax.nn.log_softmax(x, axis=0), layer_norm(x, s, b)),
        lambda rng: (normal(rng, (4, 6), scale=3.0), uniform(rng, (6,), 0.5, 1.5), normal(rng, (6,))),
    )
    register_simple(
        "activations",
        lambda x: (
            jax.nn.gelu(x, approximate=False),
            jax.nn.gelu(x, approximate=True),
            jax.nn.silu(x),
            jax.nn.softplus(x),
            jax.nn.elu(x),
            jax.nn.leaky_relu(x),
            jax.nn.relu6(x),
            jax.nn.sigmoid(x),
        ),
        lambda rng: (normal(rng, (4, 6), scale=3.0),),
    )
    register_simple(
        "activation_grads",
        lambda x: jax.grad(activations_loss)(x),
        lambda rng: (normal(rng, (4, 6), scale=2.0),),
        forward=Forward(activations_loss, (0,)),
    )
    register_simple(
        "embedding_lookup_grad",
        lambda table, ids: jax.grad(embedding_loss)(table, ids),
        lambda rng: (normal(rng, (10, 4)), ints(rng, (3, 5), 0, 10)),
        forward=Forward(embedding_loss, (0,)),
    )
    register_simple(
        "clip_by_global_norm",
        lambda a, b: tuple(
            g * jnp.minimum(1.0, 1.0 / jnp.sqrt(jnp.sum(a * a) + jnp.sum(b * b))) for g in (a, b)
        ),
        lambda rng: (normal(rng, (4, 3)), normal(rng, (5,))),
    )


# ----------------------------------------------------------------------------
# Programs: control flow
# ----------------------------------------------------------------------------


def rnn_scan(h0, xs, w_h, w_x):
    def cell(h, x):
        h = jnp.tanh(h @ w_h + x @ w_x)
        return h, jnp.sum(h, axis=-1)

    return lax.scan(cell, h0, xs)


def rnn_loss(h0, xs, w_h, w_x):
    return jnp.sum(rnn_scan(h0, xs, w_h, w_x)[1] ** 2)


def rnn_inputs(rng):
    return (
        np.zeros((2, 4), np.float32),
        normal(rng, (5, 2, 3)),
        normal(rng, (4, 4), scale=0.5),
        normal(rng, (3, 4), scale=0.5),
    )


def collatz_steps(x):
    def cond(state):
        value, _ = state
        return jnp.any(value != 1)

    def body(state):
        value, steps = state
        done = value == 1
        next_value = jnp.where(value % 2 == 0, value // 2, 3 * value + 1)
        return jnp.where(done, value, next_value), steps + jnp.where(done, 0, 1)

    return lax.while_loop(cond, body, (x, jnp.zeros_like(x)))


def moving_window_sums(x):
    def body(i, out):
        window = lax.dynamic_slice(x, (i,), (3,))
        return lax.dynamic_update_slice(out, jnp.sum(window, keepdims=True), (i,))

    return lax.fori_loop(0, x.shape[0] - 2, body, jnp.zeros(x.shape[0] - 2, x.dtype))


def register_control_flow_programs():
    register_simple("scan_rnn", rnn_scan, rnn_inputs)
    register_simple(
        "scan_rnn_grad",
        lambda h0, xs, w_h, w_x: jax.grad(lambda w: rnn_loss(h0, xs, *w))((w_h, w_x)),
        rnn_inputs,
        forward=Forward(rnn_loss, (2, 3)),
    )
    register_simple(
        "scan_reverse_unrolled",
        lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, c), jnp.zeros(3), xs, reverse=True, unroll=2),
        lambda rng: (normal(rng, (6, 3)),),
    )
    register_simple("while_loop_tuple_state", collatz_steps, lambda rng: (ints(rng, (6,), 1, 30),))
    register_simple(
        "fori_loop_newton_sqrt",
        lambda a: lax.fori_loop(0, 8, lambda i, x: 0.5 * (x + a / x), jnp.ones_like(a)),
        lambda rng: (uniform(rng, (5,), 0.5, 20.0),),
    )
    register_simple("fori_loop_dynamic_slices", moving_window_sums, lambda rng: (normal(rng, (9,)),))
    register_simple(
        "fori_loop_dynamic_trip_count",
        lambda n, x: lax.fori_loop(0, n, lambda i, acc: acc + x * i.astype(jnp.float32), jnp.zeros_like(x)),
        lambda rng: (np.int32(4), normal(rng, (3,))),
    )
    register_simple(
        "cond_two_branches",
        lambda p, x, y: lax.cond(p, lambda a, b: (a * b, jnp.sin(a)), lambda a, b: (a - b, jnp.cos(b)), x, y),
        lambda rng: (np.bool_(False), normal(rng, (3,)), normal(rng, (3,))),
    )
    register_simple(
        "cond_on_value",
        lambda x: lax.cond(jnp.sum(x) > 0, lambda v: v / jnp.sum(v), lambda v: -v, x),
        lambda rng: (normal(rng, (4,)),),
    )
    register_simple(
        "switch_three_branches",
        lambda i, x: lax.switch(i, [lambda v: v + 1, lambda v: v * v, lambda v: jnp.exp(-v)], x),
        lambda rng: (np.int32(1), normal(rng, (4,))),
    )
    register_simple(
        "switch_index_clamped",
        lambda i, x: (lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), lax.switch(-i, [jnp.sin, jnp.cos], x)),
        lambda rng: (np.int32(7), normal(rng, (4,))),
    )
    register_simple(
        "nested_loops_cond",
        lambda x: lax.fori_loop(
            0,
            3,
            lambda i, acc: lax.cond(
                i % 2 == 0, lambda a: lax.fori_loop(0, 2, lambda j, b: b * 1.5, a), lambda a: a - 1.0, acc
            ),
            x,
        ),
        lambda rng: (normal(rng, (3,)),),
    )
    register_simple(
        "vmap_cond_select",
        lambda p, x: jax.vmap(lambda q, v: lax.cond(q, jnp.sin, jnp.cos, v))(p, x),
        lambda rng: (bools(rng, (5,)), normal(rng, (5, 2))),
    )


# ----------------------------------------------------------------------------
# Programs: indexing, gather and scatter
# ----------------------------------------------------------------------------


def register_indexing_programs():
    register_simple(
        "gather_fancy_indexing",
        lambda x, i, j: (x[i], x[:, j], x[i, j[:3]], x[-1], x[1:, j[0]], jnp.take(x, j, axis=1, mode="clip")),
        lambda rng: (normal(rng, (5, 6)), ints(rng, (3,), -5, 5), ints(rng, (4,), 0, 6)),
    )
    register_simple(
        "gather_take_along_axis",
        lambda x, i: (
            jnp.take_along_axis(x, i, axis=1),
            jnp.take_along_axis(x, jnp.argsort(x, axis=0), axis=0),
        ),
        lambda rng: (normal(rng, (4, 5)), ints(rng, (4, 2), 0, 5)),
    )
    register_simple(
        "gather_dynamic_scalar_index",
        lambda x, i: (x[i], x[:, i], lax.dynamic_index_in_dim(x, i, axis=1, keepdims=False)),
        lambda rng: (normal(rng, (4, 5)), np.int32(2)),
    )
    register_simple(
        "gather_out_of_bounds_fill",
        lambda x, i: (x.at[i].get(mode="fill", fill_value=-1.0), x.at[i].get(mode="clip")),
        lambda rng: (normal(rng, (5,)), np.array([0, 4, 5, 9, -7], np.int32)),
    )
    register_simple(
        "scatter_set_max_min_mul",
        lambda x, i, u: (x.at[i].set(u), x.at[i].max(u), x.at[i].min(u), x.at[i].mul(u), x.at[:, 1].set(0.0)),
        lambda rng: (normal(rng, (6, 3)), np.array([4, 0, 2], np.int32), normal(rng, (3, 3))),
    )
    register_simple(
        "scatter_add_duplicates",
        lambda x, i, u: (x.at[i].add(u), jnp.zeros(6, jnp.int32).at[i].add(1)),
        lambda rng: (ints(rng, (6,), -9, 9), np.array([1, 3, 1, 5, 1, 9], np.int32), ints(rng, (6,), -9, 9)),
    )
    register_simple(
        "scatter_2d_indices",
        lambda x, r, c, u: (x.at[r, c].add(u), x.at[r, c].set(u, mode="drop")),
        lambda rng: (
            normal(rng, (4, 5)),
            np.array([0, 3, 2], np.int32),
            np.array([4, 1, 2], np.int32),
            normal(rng, (3,)),
        ),
    )
    register_simple(
        "segment_sum",
        lambda data, segments: jax.ops.segment_sum(data, segments, num_segments=4),
        lambda rng: (normal(rng, (8, 2)), np.array([0, 0, 1, 3, 3, 3, 2, 0], np.int32)),
    )
    register_simple(
        "one_hot_where_mask",
        lambda labels, x: (
            jax.nn.one_hot(labels, 5),
            jnp.where(x > 0, x, 0.0),
            jnp.sum(jnp.where(x > 0, 1, 0)),
        ),
        lambda rng: (ints(rng, (4,), 0, 5), normal(rng, (3, 4))),
    )


# ----------------------------------------------------------------------------
# Programs: sorting and selection
# ----------------------------------------------------------------------------


def register_sort_programs():
    register_simple(
        "sort_f32_specials",
        lambda x: (jnp.sort(x), jnp.sort(x.reshape(4, 5), axis=0), -jnp.sort(-x)),
        lambda rng: (with_specials(normal(rng, (20,))),),
    )
    register_simple(
        "argsort_stable",
        lambda x: (jnp.argsort(x), jnp.argsort(x, axis=0, descending=True)),
        lambda rng: (ints(rng, (4, 6), 0, 4).astype(np.float32),),
    )
    register_simple(
        "sort_multi_operand",
        lambda a, b, c: lax.sort((a, b, c), num_keys=2),
        lambda rng: (ints(rng, (10,), 0, 3), ints(rng, (10,), 0, 3, np.uint32), normal(rng, (10,))),
    )
    register_simple(
        "sort_int_types",
        lambda a, b: (jnp.sort(a), jnp.sort(b), jnp.sort(b.astype(jnp.int8))),
        lambda rng: (ints(rng, (3, 7), -50, 50), ints(rng, (3, 7), 0, 256, np.uint8)),
    )
    register_simple(
        "top_k",
        lambda x: lax.top_k(x, 3),
        lambda rng: (normal(rng, (4, 8)),),
    )
    register_simple(
        "searchsorted_median",
        lambda s, q: (jnp.searchsorted(s, q), jnp.median(q), jnp.quantile(q, 0.25)),
        lambda rng: (np.sort(normal(rng, (9,))), normal(rng, (6,))),
    )


# ----------------------------------------------------------------------------
# Programs: Fourier transforms (XLA's fft: FFT, IFFT, RFFT, IRFFT over 1-3 trailing dims)
# ----------------------------------------------------------------------------


def complex_normal(rng, shape, dtype=np.complex64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def register_fft_programs():
    register_simple("fft_c64", lambda z: jnp.fft.fft(z), lambda rng: (complex_normal(rng, (4, 16)),))
    # Lengths with the factors 2 and 5, and a prime.
    register_simple(
        "fft_ifft_c64",
        lambda z, w: (jnp.fft.ifft(z), jnp.fft.ifft(w)),
        lambda rng: (complex_normal(rng, (3, 10)), complex_normal(rng, (2, 13))),
    )
    register_simple(
        "fft_rfft_f32",
        lambda x, y: (jnp.fft.rfft(x), jnp.fft.rfft(y)),
        lambda rng: (normal(rng, (4, 12)), normal(rng, (3, 9))),
    )
    # Arbitrary spectra: the imaginary parts a real signal's spectrum cannot
    # have (zero frequency, and n/2 for even n) do not count.
    register_simple(
        "fft_irfft_f32",
        lambda a, b: (jnp.fft.irfft(a), jnp.fft.irfft(b, n=9)),
        lambda rng: (complex_normal(rng, (4, 7)), complex_normal(rng, (3, 5))),
    )
    register_simple(
        "fft_fft2_c64",
        lambda z: (jnp.fft.fft2(z), jnp.fft.ifft2(z)),
        lambda rng: (complex_normal(rng, (2, 6, 8)),),
    )
    register_simple(
        "fft_rfftn_irfftn_3d_f32",
        lambda x, c: (
            jnp.fft.rfftn(x, axes=(1, 2, 3)),
            jnp.fft.irfftn(c, s=(4, 6, 10), axes=(1, 2, 3)),
            jnp.fft.fftn(c, axes=(1, 2, 3)),
        ),
        lambda rng: (normal(rng, (2, 4, 6, 10)), complex_normal(rng, (2, 4, 6, 6))),
    )
    register_simple(
        "fft_x64_f64_c128",
        lambda z, x: (
            jnp.fft.fft(z),
            jnp.fft.ifft2(z),
            jnp.fft.rfft(x),
            jnp.fft.irfftn(jnp.fft.rfftn(x), s=x.shape),
            jnp.fft.irfft(z, n=14),
        ),
        lambda rng: (complex_normal(rng, (3, 8), np.complex128), normal(rng, (5, 7), np.float64)),
        x64=True,
    )


# ----------------------------------------------------------------------------
# Programs: random numbers (threefry)
# ----------------------------------------------------------------------------


def raw_key(seed):
    return np.array([0, seed], np.uint32)


def register_random_programs():
    key = lambda rng: (raw_key(int(rng.integers(0, 2**31))),)
    register_simple("random_uniform", lambda k: jax.random.uniform(k, (4, 5), minval=-2.0, maxval=3.0), key)
    register_simple("random_normal", lambda k: jax.random.normal(k, (3, 6)), key)
    register_simple("random_bernoulli", lambda k: jax.random.bernoulli(k, 0.3, (10,)), key)
    register_simple("random_permutation", lambda k: jax.random.permutation(k, 10), key)
    register_simple(
        "random_split_fold_randint",
        lambda k: (jax.random.split(k, 3), jax.random.fold_in(k, 7), jax.random.randint(k, (6,), -5, 20)),
        key,
    )
    register_simple(
        "random_dropout",
        lambda k, x: jnp.where(jax.random.bernoulli(k, 0.75, x.shape), x / 0.75, 0.0),
        lambda rng: (raw_key(3), normal(rng, (4, 4))),
    )


# ----------------------------------------------------------------------------
# Programs: random numbers from rng-bit-generator (JAX's rbg and unsafe_rbg)
# ----------------------------------------------------------------------------


def rbg_key_data(rng):
    return rng.integers(0, 2**32, (4,), dtype=np.uint64).astype(np.uint32)


def register_rbg_programs():
    """XLA's rng-bit-generator (rng_default is Philox on CPU) through the two
    JAX implementations built on it; outputs must match bit for bit."""
    for impl in ("rbg", "unsafe_rbg"):

        def draws(data, impl=impl):
            k = jax.random.wrap_key_data(data, impl=impl)
            first, second = jax.random.split(k)
            return (
                jax.random.bits(k, (3, 5), jnp.uint32),
                jax.random.bits(first, (7,), jnp.uint8),
                jax.random.bits(second, (2, 3), jnp.uint16),
                jax.random.uniform(jax.random.fold_in(k, 3), (4, 5), minval=-1.0, maxval=2.0),
                jax.random.randint(k, (6,), -5, 20),
            )

        def floats(data, impl=impl):
            k = jax.random.wrap_key_data(data, impl=impl)
            return (
                jax.random.normal(k, (3, 4)),
                jax.random.uniform(k, (5,), jnp.float16),
                jax.random.uniform(k, (2, 3), jnp.bfloat16),
                jax.random.bernoulli(k, 0.3, (9,)),
            )

        def wide(data, impl=impl):
            k = jax.random.wrap_key_data(data, impl=impl)
            return jax.random.bits(k, (5,), jnp.uint64), jax.random.uniform(k, (3, 3), jnp.float64)

        register_simple(f"random_{impl}_bits", draws, lambda rng: (rbg_key_data(rng),))
        register_simple(f"random_{impl}_floats", floats, lambda rng: (rbg_key_data(rng),))
        register_simple(f"x64_random_{impl}", wide, lambda rng: (rbg_key_data(rng),), x64=True)


# ----------------------------------------------------------------------------
# Programs: annotations for XLA's partitioner and composites, which a single
# device runs as their operands and decompositions
# ----------------------------------------------------------------------------


def register_annotation_programs():
    from jax.sharding import NamedSharding, PartitionSpec

    def constrained(x):
        mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
        y = jnp.sin(x)
        y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, PartitionSpec("x")))
        return y * 2.0 + jnp.sum(y, axis=0)

    def composite(x):
        scaled_tanh = jax.lax.composite(lambda v: jnp.tanh(v) * 2.0, name="kiln.scaled_tanh")
        return scaled_tanh(x) + 1.0

    register_simple("sharding_constraint", constrained, lambda rng: (normal(rng, (4, 8)),))

    # A bf16 product read back in f32: XLA's CPU backend (and Kiln's cpu)
    # keep the f32 product instead of rounding it to bf16 first.
    def bf16_product_in_f32(a, b):
        return jnp.dot(a, b).astype(jnp.float32) * 0.5

    register_simple(
        "bf16_dot_convert_f32",
        bf16_product_in_f32,
        lambda rng: (normal(rng, (8, 16), "bfloat16"), normal(rng, (16, 4), "bfloat16")),
    )
    register_simple("composite_call", composite, lambda rng: (normal(rng, (3, 5)),))


# ----------------------------------------------------------------------------
# Programs: element types (f16, bf16, complex, and 64-bit types with x64)
# ----------------------------------------------------------------------------


def register_dtype_programs():
    register_simple(
        "f16_elementwise_reduce",
        lambda a, b: (a + b, a * b, jnp.exp(a), jnp.tanh(b), jnp.sum(a, axis=0), jnp.max(b), a @ b.T),
        lambda rng: (normal(rng, (4, 6), np.float16), normal(rng, (4, 6), np.float16)),
    )
    register_simple(
        "bf16_elementwise_reduce",
        lambda a, b: (a + b, a * b, jnp.sqrt(jnp.abs(a)), jax.nn.relu(b), jnp.mean(a, axis=1), a @ b.T),
        lambda rng: (normal(rng, (4, 6), jnp.bfloat16), normal(rng, (4, 6), jnp.bfloat16)),
    )
    register_simple(
        "bf16_matmul_f32_accumulate",
        lambda a, b: lax.dot(a, b, preferred_element_type=jnp.float32),
        lambda rng: (normal(rng, (4, 8), jnp.bfloat16), normal(rng, (8, 3), jnp.bfloat16)),
    )
    register_simple(
        "complex64_arith",
        lambda real, imag, z: (
            lax.complex(real, imag) * z,
            z / lax.complex(real, imag),
            jnp.real(z),
            jnp.imag(z),
            jnp.abs(z),
            jnp.conj(z),
            jnp.angle(z),
            z + 1.0,
            -z,
            z == jnp.conj(z),
        ),
        lambda rng: (normal(rng, (5,)), normal(rng, (5,)), normal(rng, (5,)) + 1j * normal(rng, (5,))),
    )
    register_simple(
        "complex64_transcendental",
        lambda z: (jnp.exp(z), jnp.log(z), jnp.sqrt(z), jnp.sin(z), jnp.tanh(z), z**2),
        lambda rng: ((normal(rng, (6,)) + 1j * normal(rng, (6,))).astype(np.complex64),),
    )
    register_simple(
        "complex64_matmul_sum",
        lambda a, b: (a @ b, jnp.sum(a, axis=0), jnp.einsum("ij,ij->i", a, jnp.conj(a))),
        lambda rng: (
            (normal(rng, (3, 4)) + 1j * normal(rng, (3, 4))).astype(np.complex64),
            (normal(rng, (4, 2)) + 1j * normal(rng, (4, 2))).astype(np.complex64),
        ),
    )

    x64 = {"x64": True}
    register_simple(
        "f64_elementwise",
        lambda a, b: (
            jnp.exp(a),
            jnp.log(jnp.abs(a) + 1),
            jnp.sin(a),
            a / b,
            jnp.power(jnp.abs(a), b),
            lax.erf(a),
            jnp.sqrt(jnp.abs(b)),
            jnp.floor(a * 10),
            jnp.arctan2(a, b),
        ),
        lambda rng: (normal(rng, (6,), np.float64), normal(rng, (6,), np.float64)),
        **x64,
    )
    register_simple(
        "f64_matmul_reduce",
        lambda a, b: (a @ b, jnp.sum(a), jnp.cumsum(a, axis=1), jnp.argmax(a, axis=1)),
        lambda rng: (normal(rng, (3, 5), np.float64), normal(rng, (5, 2), np.float64)),
        **x64,
    )
    register_simple(
        "s64_arithmetic",
        lambda a, b: (a + b, a * b, a // b, a % b, a >> 7, a << 3, jnp.sum(a), jnp.max(b), lax.clz(a)),
        lambda rng: (ints(rng, (6,), -(2**50), 2**50, np.int64), ints(rng, (6,), 1, 2**20, np.int64)),
        **x64,
    )
    register_simple(
        "u64_bitwise",
        lambda a, b: (
            a ^ b,
            a & b,
            a | b,
            lax.shift_right_logical(a, b % 70),
            lax.population_count(a),
            a > b,
        ),
        lambda rng: (
            ints(rng, (6,), 0, 2**63, np.uint64) * np.uint64(2) + np.uint64(1),
            ints(rng, (6,), 0, 2**40, np.uint64),
        ),
        **x64,
    )
    register_simple(
        "convert_64bit",
        lambda f, i: (
            f.astype(jnp.int64),
            i.astype(jnp.float64),
            f.astype(jnp.float32),
            i.astype(jnp.int32),
            i.astype(jnp.uint64),
            f.astype(jnp.float16),
            lax.bitcast_convert_type(f, jnp.int64),
        ),
        lambda rng: (normal(rng, (6,), np.float64, 1e6), ints(rng, (6,), -(2**40), 2**40, np.int64)),
        **x64,
    )
    register_simple(
        "complex128_arith",
        lambda z, w: (z * w, z / w, jnp.exp(z), jnp.abs(z), z @ w.T, jnp.real(z) + jnp.imag(w)),
        lambda rng: (
            normal(rng, (3, 3), np.float64) + 1j * normal(rng, (3, 3), np.float64),
            normal(rng, (3, 3), np.float64) - 1j * normal(rng, (3, 3), np.float64),
        ),
        **x64,
    )
    register_simple(
        "x64_iota_indexing",
        lambda x, i: (jnp.arange(5), x[i], jnp.argsort(x), jnp.cumsum(jnp.ones(4, jnp.int64))),
        lambda rng: (normal(rng, (7,), np.float64), np.array([6, 0, -2], np.int64)),
        **x64,
    )
    register_simple(
        "x64_mlp_train_step",
        mlp_train_step,
        lambda rng: (
            normal(rng, (4, 6), np.float64),
            ints(rng, (4,), 0, 3, np.int64),
            *[p.astype(np.float64) for p in mlp_params(rng, [6, 5, 5, 3])],
        ),
        **x64,
    )
    register_simple(
        "x64_random_uniform",
        lambda k: (jax.random.uniform(k, (5,), dtype=jnp.float64), jax.random.randint(k, (4,), 0, 2**40)),
        lambda rng: (raw_key(11),),
        **x64,
    )


# ----------------------------------------------------------------------------
# Programs: structure (checkpoint, nested jit, custom derivatives)
# ----------------------------------------------------------------------------


def sin_times_plus_one(x, y):
    return jnp.sin(x) * y + 1.0


@functools.cache
def inner_jitted():
    """A jitted function called from another jitted one lowers to an HLO call."""
    return jax.jit(sin_times_plus_one)


def checkpoint_loss(x, w):
    return jnp.sum(jax.checkpoint(lambda v: jnp.sin(jnp.tanh(v @ w)) ** 2)(x))


def custom_jvp_loss(x):
    return jnp.sum(jax.nn.relu(x) + jax.nn.softplus(x) + jnp.linalg.norm(x))


def sin_times_square_sum(z):
    return jnp.sum(jnp.sin(z) * z**2)


def register_structure_programs():
    register_simple(
        "checkpoint_grad",
        lambda x, w: jax.grad(checkpoint_loss, 1)(x, w),
        lambda rng: (normal(rng, (3, 4)), normal(rng, (4, 4))),
        forward=Forward(checkpoint_loss, (1,)),
    )
    register_simple(
        "nested_jit_call",
        lambda x, y: (inner_jitted()(x, y), inner_jitted()(y, x) * 2.0),
        lambda rng: (normal(rng, (4,)), normal(rng, (4,))),
    )
    register_simple(
        "custom_jvp_grad",
        lambda x: jax.grad(custom_jvp_loss)(x),
        lambda rng: (normal(rng, (5,)),),
        forward=Forward(custom_jvp_loss, (0,)),
    )
    register_simple(
        "jvp_hessian_vector",
        lambda x, v: jax.jvp(jax.grad(sin_times_square_sum), (x,), (v,)),
        lambda rng: (normal(rng, (4,)), normal(rng, (4,))),
        forward=Forward(lambda x, v: sin_times_square_sum(x), (0,)),
    )
    register_simple(
        "unused_argument_kept",
        lambda used, unused: used * 2.0,
        lambda rng: (normal(rng, (3,)), ints(rng, (2,), 0, 5)),
    )
    register_simple(
        "scalar_program",
        lambda a, b: (a * b + 1.0, jnp.where(a > b, a, b), (a > 0) & (b > 0)),
        lambda rng: (np.float32(1.5), np.float32(-0.25)),
    )


# LAPACK custom calls (lapack_?potrf_ffi, ...) that jnp.linalg and
# jax.scipy.linalg lower to on CPU. Each program takes one 4x4 matrix and a
# batch of two, built well conditioned, and returns what the function gives.
LINALG_DTYPES = (
    ("f32", "float32", False),
    ("f64", "float64", True),
    ("c64", "complex64", False),
    ("c128", "complex128", True),
)


def linalg_matrix(rng, shape, dtype):
    values = normal(rng, shape, "float64")
    if np.dtype(dtype).kind == "c":
        values = values + 1j * normal(rng, shape, "float64")
    return values


def linalg_positive_definite(rng, shape, dtype):
    """B B^H + n I: Hermitian positive definite, eigenvalues well apart from 0."""
    b = linalg_matrix(rng, shape, dtype)
    n = shape[-1]
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)).astype(dtype)


def linalg_well_conditioned(rng, shape, dtype):
    return (linalg_matrix(rng, shape, dtype) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def linalg_lower_triangular(rng, shape, dtype):
    return np.tril(linalg_well_conditioned(rng, shape, dtype)).astype(dtype)


def schur_phase_normalised(a):
    """The Schur form a = Z T Z^H (complex for complex a, real with 2x2 blocks
    for real a) with each column of Z scaled by a unit phase d_j (a sign for
    real a) that makes its first entry real and positive (T_ij scaled by
    conj(d_i) d_j): the form is unique only up to those phases, which LAPACK
    builds choose differently (reference LAPACK and OpenBLAS do for the f32
    program), and after this scaling two correct forms agree elementwise."""
    t, z = jax.scipy.linalg.schur(a, output="complex" if jnp.iscomplexobj(a) else "real")
    first_row = z[..., :1, :]
    d = jnp.conj(first_row) / jnp.abs(first_row)
    return jnp.swapaxes(jnp.conj(d), -1, -2) * t * d, z * d


def unit_phases(vectors):
    """The unit phase d_j of each column of `vectors` that makes its entry of
    largest magnitude real and positive (a sign for real vectors)."""
    index = jnp.argmax(jnp.abs(vectors), axis=-2, keepdims=True)
    pivot = jnp.take_along_axis(vectors, index, axis=-2)
    return jnp.conj(pivot) / jnp.abs(pivot)


def eigh_phase_normalised(a, **kwargs):
    """jnp.linalg.eigh with each eigenvector scaled by unit_phases: an
    eigenvector is unique only up to a phase, which LAPACK and the GPU backends'
    Jacobi expansion choose differently; after this scaling two correct
    decompositions (distinct eigenvalues) agree elementwise."""
    w, v = jnp.linalg.eigh(a, **kwargs)
    return w, v * unit_phases(v)


def svd_phase_normalised(u, s, vh):
    """An SVD with each column of U scaled by unit_phases and the matching row
    of V^H by the conjugate phase (U S V^H unchanged), for the same reason."""
    d = unit_phases(u)
    k = min(u.shape[-1], vh.shape[-2])
    paired = jnp.swapaxes(jnp.conj(d[..., :, :k]), -1, -2) * vh[..., :k, :]
    return u * d, s, jnp.concatenate([paired, vh[..., k:, :]], axis=-2)


def register_linalg_programs():
    def both(fn):
        return lambda one, batch: (fn(one), fn(batch))

    functions = {
        "cholesky": (both(lambda a: jnp.linalg.cholesky(a)), linalg_positive_definite),
        "solve": (both(lambda a: jnp.linalg.solve(a, a[..., :2] + 1.0)), linalg_well_conditioned),
        "inv": (both(lambda a: jnp.linalg.inv(a)), linalg_well_conditioned),
        "det": (both(lambda a: jnp.linalg.det(a)), linalg_well_conditioned),
        "slogdet": (both(lambda a: jnp.linalg.slogdet(a)), linalg_well_conditioned),
        "qr": (both(lambda a: jnp.linalg.qr(a)), linalg_well_conditioned),
        "eigh": (both(lambda a: eigh_phase_normalised(a)), linalg_positive_definite),
        "svd_full": (
            both(lambda a: svd_phase_normalised(*jnp.linalg.svd(a, full_matrices=True))),
            linalg_well_conditioned,
        ),
        "svd_thin": (
            both(lambda a: svd_phase_normalised(*jnp.linalg.svd(a[..., :3], full_matrices=False))),
            linalg_well_conditioned,
        ),
        "svd_values": (both(lambda a: jnp.linalg.svd(a, compute_uv=False)), linalg_well_conditioned),
        "solve_triangular": (
            both(lambda a: jax.scipy.linalg.solve_triangular(a, a[..., :2] + 1.0, lower=True)),
            linalg_lower_triangular,
        ),
        "solve_triangular_upper_transposed": (
            both(
                lambda a: jax.scipy.linalg.solve_triangular(
                    jnp.swapaxes(a, -1, -2),
                    a[..., :2] + 1.0,
                    lower=False,
                    trans=1,
                    unit_diagonal=True,
                )
            ),
            linalg_lower_triangular,
        ),
        "lu": (lambda one, batch: (jax.scipy.linalg.lu(one), jax.scipy.linalg.lu(batch[0])), linalg_matrix),
        "lu_factor": (both(lambda a: jax.scipy.linalg.lu_factor(a)), linalg_matrix),
        "eig": (both(lambda a: jnp.linalg.eig(a)), linalg_matrix),
        "schur": (lambda one, batch: jax.scipy.linalg.schur(one), linalg_matrix),
        "hessenberg": (lambda one, batch: jax.scipy.linalg.hessenberg(one, calc_q=True), linalg_matrix),
        "tridiagonal": (both(lambda a: lax.linalg.tridiagonal(a)), linalg_positive_definite),
    }
    for function_name, (fn, make_matrix) in functions.items():
        for suffix, dtype, x64 in LINALG_DTYPES:
            program_fn = fn
            if function_name == "schur":
                program_fn = lambda one, batch: schur_phase_normalised(one)  # noqa: E731

            def inputs(rng, make_matrix=make_matrix, dtype=dtype):
                return (make_matrix(rng, (4, 4), dtype).astype(dtype), make_matrix(rng, (2, 4, 4), dtype).astype(dtype))

            register_simple(f"linalg_{function_name}_{suffix}", program_fn, inputs, x64=x64)

    # LAPACK reports these through info: cholesky masks a failed factor with
    # NaNs; a duplicated row leaves an exact zero pivot, so det is 0.
    def not_positive_definite(rng):
        one = linalg_positive_definite(rng, (4, 4), "float32")
        one[2, 2] = -one[2, 2]
        return one, np.stack([linalg_positive_definite(rng, (4, 4), "float32"), -np.eye(4, dtype="float32")])

    def singular(rng):
        one = linalg_well_conditioned(rng, (4, 4), "float32")
        one[3] = one[1]
        batch = linalg_well_conditioned(rng, (2, 4, 4), "float32")
        batch[1, 2] = batch[1, 0]
        return one, batch

    register_simple(
        "linalg_cholesky_not_positive_definite_f32", both(lambda a: jnp.linalg.cholesky(a)), not_positive_definite
    )
    register_simple(
        "linalg_det_singular_f32", both(lambda a: (jnp.linalg.det(a), jnp.linalg.slogdet(a))), singular
    )

    # Other functions over the same targets and attributes (f32): gesdd's
    # values-only and thin modes, syevd's upper triangle, potrf's upper
    # factor, trsm transposed, and gesvd (lax.linalg.svd's QR algorithm).
    others = {
        "pinv": (both(lambda a: jnp.linalg.pinv(a)), linalg_well_conditioned),
        "matrix_rank_cond": (
            both(lambda a: (jnp.linalg.matrix_rank(a), jnp.linalg.cond(a))),
            linalg_well_conditioned,
        ),
        "lstsq": (lambda one, batch: jnp.linalg.lstsq(one, batch[0]), linalg_matrix),
        "eigvalsh_upper": (
            both(lambda a: (jnp.linalg.eigvalsh(a, UPLO="U"), eigh_phase_normalised(a, UPLO="U"))),
            linalg_positive_definite,
        ),
        "cholesky_upper_cho_solve": (
            both(
                lambda a: (
                    jax.scipy.linalg.cholesky(a, lower=False),
                    jax.scipy.linalg.cho_solve((jax.scipy.linalg.cholesky(a, lower=False), False), a[..., :2]),
                )
            ),
            linalg_positive_definite,
        ),
        "svd_qr_algorithm": (
            both(
                lambda a: (
                    svd_phase_normalised(*lax.linalg.svd(a, algorithm=lax.linalg.SvdAlgorithm.QR)),
                    svd_phase_normalised(
                        *lax.linalg.svd(a[..., :3], full_matrices=False, algorithm=lax.linalg.SvdAlgorithm.QR)
                    ),
                    lax.linalg.svd(a, compute_uv=False, algorithm=lax.linalg.SvdAlgorithm.QR),
                )
            ),
            linalg_well_conditioned,
        ),
    }
    for function_name, (fn, make_matrix) in others.items():

        def inputs(rng, make_matrix=make_matrix):
            return (
                make_matrix(rng, (4, 4), "float32").astype("float32"),
                make_matrix(rng, (2, 4, 4), "float32").astype("float32"),
            )

        register_simple(f"linalg_{function_name}_f32", fn, inputs)


register_conversion_programs()
register_data_movement_programs()
register_reduction_programs()
register_window_programs()
register_convolution_programs()
register_dot_programs()
register_model_programs()
register_control_flow_programs()
register_indexing_programs()
register_sort_programs()
register_fft_programs()
register_random_programs()
register_rbg_programs()
register_annotation_programs()
register_dtype_programs()
register_structure_programs()
register_linalg_programs()


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="regenerate only these programs")
    parser.add_argument("--list", action="store_true", help="list program names and exit")
    parser.add_argument("--stats", action="store_true", help="print opcode usage of the corpus")
    parser.add_argument("--phase", choices=["x32", "x64"], help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.stats:
        return print_stats()

    if args.list:
        for name in sorted(PROGRAMS):
            print(name + ("  (x64)" if PROGRAMS[name].x64 else ""))
        return 0

    names = sorted(args.only) if args.only else sorted(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        print(f"unknown program(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2

    if args.phase:
        wanted_x64 = args.phase == "x64"
        return 1 if run_phase([n for n in names if PROGRAMS[n].x64 == wanted_x64], wanted_x64) else 0

    if not args.only and CORPUS_DIR.exists():
        for stale in sorted(p for p in CORPUS_DIR.iterdir() if p.name not in PROGRAMS):
            print(f"  removing stale {stale.name}")
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()

    failures = 0
    for phase in ("x32", "x64"):
        selected = [n for n in names if PROGRAMS[n].x64 == (phase == "x64")]
        if selected:
            # Each phase in a fresh process: jax_enable_x64 must be set before any tracing.
            command = [sys.executable, str(Path(__file__).resolve()), "--phase", phase, "--only", *selected]
            env = dict(os.environ, JAX_PLATFORMS="cpu")
            failures += subprocess.run(command, env=env, check=False).returncode != 0
    total = len(list(CORPUS_DIR.glob("*/module.hlo")))
    print(f"corpus: {total} programs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
