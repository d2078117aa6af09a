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
import os
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent
CORPUS_DIR = HERE / "corpus"
OPCODE_HEADER = HERE.parent.parent / "core" / "opcode.h"


# ----------------------------------------------------------------------------
# Registry
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Program:
    name: str
    # build(rng) -> (function, tuple of input arrays)
    build: Callable
    x64: bool


PROGRAMS: dict[str, Program] = {}


def program(name: str, x64: bool = False):
    def register(build):
        if name in PROGRAMS:
            raise ValueError(f"duplicate program name {name!r}")
        PROGRAMS[name] = Program(name, build, x64)
        return build

    return register


def register_simple(name: str, fn: Callable, make_inputs: Callable, x64: bool = False):
    program(name, x64)(lambda rng: (fn, make_inputs(rng)))


# Input helpers: every program draws from its own generator seeded from its name.


def normal(rng, shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def uniform(rng, shape, low, high, dtype=np.float32):
    return rng.uniform(low, high, shape).astype(dtype)


def ints(rng, shape, low, high, dtype=np.int32):
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
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}  # fmt: skip


def normalize_hlo(text: str) -> str:
    """Removes bits that vary between runs or machines (source metadata)."""
    text = re.sub(r", metadata=\{[^{}]*\}", "", text)
    lines = [line.rstrip() for line in text.splitlines()]
    return "\n".join(lines).strip() + "\n"


def entry_parameter_types(hlo: str) -> list[str]:
    """Element types of ENTRY's parameters, ordered by parameter number."""
    match = re.search(r"^ENTRY [^\n]*\{\n(.*?)^\}", hlo, re.M | re.S)
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
    if not outputs:
        raise RuntimeError(f"{prog.name}: program has no outputs")

    out_dir = CORPUS_DIR / prog.name
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    (out_dir / "module.hlo").write_text(hlo)
    for index, array in enumerate(inputs):
        np.save(out_dir / f"in{index}.npy", array, allow_pickle=False)
    for index, array in enumerate(outputs):
        np.save(out_dir / f"out{index}.npy", array, allow_pickle=False)


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
        except Exception as error:  # report every failing program, then fail the run
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
    return set(re.findall(r'^\s*V\(k\w+, "([\w\-]+)"', OPCODE_HEADER.read_text(), re.M))


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
