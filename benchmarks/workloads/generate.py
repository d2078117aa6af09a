#!/usr/bin/env python3
"""Writes the benchmark workloads as HLO text: full/NAME.hlo and quick/NAME.hlo.

Each workload of catalog.py is lowered from its JAX function (jax_programs.py) with
`jax.jit(f, keep_unused=True).lower(*shapes).as_text(dialect="hlo")`, as the
conformance corpus generator does, so the modules are what JAX users export.
Inputs are not stored: benchmarks/compare draws them at run time.

Usage (JAX from tests/conformance/requirements.txt, e.g. benchmarks/.venv made by
benchmarks/install-peers):
  generate.py            regenerate every workload of both sizes
  generate.py --check    exit 1 when a committed file differs from what would be written
"""

from __future__ import annotations

import argparse
import sys

import catalog


def lower(workload: catalog.Workload) -> str:
    import jax
    import jax_programs

    jax.config.update("jax_platforms", "cpu")
    arguments = [jax.ShapeDtypeStruct(i.shape, i.dtype) for i in workload.inputs]
    function = jax_programs.hlo_function_for(workload)
    return jax.jit(function, keep_unused=True).lower(*arguments).as_text(dialect="hlo")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    args = parser.parse_args()
    stale = []
    for size in catalog.SIZES:
        directory = catalog.HERE / size
        directory.mkdir(exist_ok=True)
        expected = set()
        for workload in catalog.workloads(size):
            path = workload.hlo_path(size)
            expected.add(path.name)
            text = lower(workload)
            if args.check:
                if not path.exists() or path.read_text() != text:
                    stale.append(str(path.relative_to(catalog.HERE)))
            else:
                path.write_text(text)
                print(f"wrote {path.relative_to(catalog.HERE)}")
        for leftover in directory.glob("*.hlo"):
            if leftover.name not in expected:
                if args.check:
                    stale.append(str(leftover.relative_to(catalog.HERE)))
                else:
                    leftover.unlink()
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
