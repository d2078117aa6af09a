#!/usr/bin/env python3
"""Compiles every conformance program to PTX with `kiln compile` for each
GPU target and assembles each PTX module with NVIDIA's ptxas.

  check_corpus_ptx.py --kiln PATH --ptxas PATH --corpus DIR --targets sm_75 sm_80 sm_90 [--no-unimplemented]
                      [--shard I/N]
  check_corpus_ptx.py --corpus DIR --shard-plan N

--shard I/N checks only every N-th program of the sorted corpus, from the
I-th on (1 <= I <= N), so that N tests, one per shard, run side by side and
each is short; the N shards together check every program once.
--shard-plan N prints how many programs each of the N shards checks and
fails unless every program of the corpus is in exactly one of them.

Prints a table per target and every failure by name, then fails when any
program fails to compile for a reason other than UNIMPLEMENTED, when ptxas
refuses any module, or when more than half of the corpus is UNIMPLEMENTED
(a check of almost nothing is not a pass), or when any is UNIMPLEMENTED
with --no-unimplemented. The UNIMPLEMENTED programs are
listed with the op the backend names. KILN_CUDA_LIBDEVICE must name
libdevice.10.bc, which the backend links math functions from.

Standard library only.
"""

import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

INSTALL_HINT = ("install it with `bash .ci/install-deps` (NVIDIA's nvidia-cuda-nvcc-cu12 wheel, into "
                "build/cuda-tools) and run CMake again, or point KILN_PTXAS / KILN_CUDA_LIBDEVICE at a CUDA "
                "toolkit's ptxas and nvvm/libdevice/libdevice.10.bc; configure with -DKILN_CUDA_PTXAS_TESTS=OFF "
                "to leave this test out")
WROTE = re.compile(r"^wrote (.+): (\d+) kernels? for (sm_\d+)$")


class Outcome:
    """What happened to one (program, target)."""

    def __init__(self, program, target):
        self.program, self.target = program, target
        self.kernels = 0
        self.unimplemented = None  # the backend's message
        self.compile_error = None  # first line of kiln's error
        self.ptxas_error = None  # first error line of ptxas


def first_line(text, prefer=None):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if prefer is not None:
        for line in lines:
            if prefer in line:
                return line
    return lines[0] if lines else "(no output)"


def check_one(kiln, ptxas, module, program, target, work):
    outcome = Outcome(program, target)
    out_dir = os.path.join(work, target, program)
    compiled = subprocess.run([kiln, "compile", module, "--backend", "cuda", "--emit", "ptx", "--target", target,
                               "--output-dir", out_dir], capture_output=True, text=True, timeout=600)
    if compiled.returncode != 0:
        message = compiled.stderr.strip()
        if "UNIMPLEMENTED" in message:
            # "kiln: error: UNIMPLEMENTED: .../module.hlo: <what the backend says>"
            outcome.unimplemented = first_line(message).split("module.hlo: ", 1)[-1]
        else:
            outcome.compile_error = "exit %d: %s" % (compiled.returncode, first_line(message, "error"))
        return outcome
    match = WROTE.match(compiled.stdout.strip())
    ptx_path = os.path.join(out_dir, "module.ptx")
    if match is None or match.group(3) != target or not os.path.isfile(ptx_path):
        outcome.compile_error = "unexpected output %r (no %s)" % (compiled.stdout.strip(), ptx_path)
        return outcome
    outcome.kernels = int(match.group(2))
    with open(ptx_path, encoding="utf-8", errors="replace") as f:
        ptx = f.read()
    entries = len(re.findall(r"^\s*(?:\.visible\s+)?\.entry\s", ptx, re.MULTILINE))
    if entries != outcome.kernels:
        outcome.compile_error = "kiln reported %d kernels but the PTX has %d .entry" % (outcome.kernels, entries)
        return outcome
    if outcome.kernels == 0:
        return outcome  # nothing for ptxas to assemble
    if not re.search(r"^\.target\s+%s\b" % target, ptx, re.MULTILINE):
        outcome.compile_error = "the PTX does not say .target %s" % target
        return outcome
    assembled = subprocess.run([ptxas, "-arch=" + target, ptx_path, "-o", os.devnull], capture_output=True,
                               text=True, timeout=600)
    if assembled.returncode != 0:
        outcome.ptxas_error = first_line(assembled.stderr + assembled.stdout, "error")
    return outcome


def parse_shard(text):
    """'I/N' -> (I, N), 1 <= I <= N."""
    match = re.fullmatch(r"(\d+)/(\d+)", text)
    if match is None or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise argparse.ArgumentTypeError("--shard wants I/N with 1 <= I <= N, got %r" % text)
    return int(match.group(1)), int(match.group(2))


def shard_programs(programs, index, count):
    """The programs shard `index` of `count` (1-based) checks: every count-th, from the index-th on."""
    return programs[index - 1::count]


def print_shard_plan(programs, count):
    """Prints each shard's share; fails unless each program is in exactly one shard."""
    seen = collections.Counter()
    for index in range(1, count + 1):
        mine = shard_programs(programs, index, count)
        seen.update(mine)
        print("shard %d of %d: %d programs, %s .. %s" % (index, count, len(mine), mine[0] if mine else "-",
                                                          mine[-1] if mine else "-"))
    missing = [p for p in programs if seen[p] == 0]
    repeated = [p for p in programs if seen[p] > 1]
    if missing or repeated:
        print("FAILED: the %d shards leave out %d programs (%s) and check %d more than once (%s)" % (
            count, len(missing), " ".join(missing), len(repeated), " ".join(repeated)))
        return 1
    if count > len(programs):
        print("FAILED: %d shards for %d programs leave a shard with none, and an empty shard fails" % (
            count, len(programs)))
        return 1
    print("PASSED: the %d shards check each of the %d programs once" % (count, len(programs)))
    return 0


def print_table(programs, targets, outcomes):
    print("%-8s %9s %9s %14s %7s %9s %13s" % ("target", "programs", "compiled", "unimplemented", "failed",
                                              "kernels", "ptxas ok"))
    for target in targets:
        mine = [o for o in outcomes if o.target == target]
        compiled = [o for o in mine if o.unimplemented is None and o.compile_error is None]
        assembled = [o for o in compiled if o.kernels > 0]
        ok = [o for o in assembled if o.ptxas_error is None]
        print("%-8s %9d %9d %14d %7d %9d %8d of %-3d" % (
            target, len(programs), len(compiled), sum(o.unimplemented is not None for o in mine),
            sum(o.compile_error is not None for o in mine), sum(o.kernels for o in compiled), len(ok),
            len(assembled)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln")
    parser.add_argument("--ptxas")
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--targets", nargs="+")
    parser.add_argument("--shard", type=parse_shard, default=(1, 1), metavar="I/N",
                        help="check every N-th program from the I-th on (1 <= I <= N)")
    parser.add_argument("--shard-plan", type=int, metavar="N",
                        help="print each of N shards' share of the corpus and check that they cover it once")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", help="write the PTX files here instead of a temporary directory")
    parser.add_argument("--no-unimplemented", action="store_true",
                        help="fail when any program is UNIMPLEMENTED (for a set of programs the backend must run)")
    args = parser.parse_args()
    if args.shard_plan is None and not (args.kiln and args.ptxas and args.targets):
        parser.error("--kiln, --ptxas and --targets are required (unless --shard-plan)")
    if args.shard_plan is not None and args.shard_plan < 1:
        parser.error("--shard-plan wants a count of at least 1, got %d" % args.shard_plan)

    corpus = sorted(name for name in os.listdir(args.corpus)
                    if os.path.isfile(os.path.join(args.corpus, name, "module.hlo")))
    if not corpus:
        print("FAILED: no programs in %s" % args.corpus, file=sys.stderr)
        return 1
    if args.shard_plan is not None:
        return print_shard_plan(corpus, args.shard_plan)
    shard_index, shard_count = args.shard
    programs = shard_programs(corpus, shard_index, shard_count)
    if not programs:
        print("FAILED: shard %d of %d holds none of the %d programs" % (shard_index, shard_count, len(corpus)),
              file=sys.stderr)
        return 1

    if not (os.path.isfile(args.ptxas) and os.access(args.ptxas, os.X_OK)):
        print("FAILED: ptxas not found (%r): %s" % (args.ptxas, INSTALL_HINT), file=sys.stderr)
        return 1
    libdevice = os.environ.get("KILN_CUDA_LIBDEVICE", "")
    if not os.path.isfile(libdevice):
        print("FAILED: KILN_CUDA_LIBDEVICE=%r is not libdevice.10.bc: %s" % (libdevice, INSTALL_HINT),
              file=sys.stderr)
        return 1
    version = subprocess.run([args.ptxas, "--version"], capture_output=True, text=True).stdout.strip()
    shard = "" if shard_count == 1 else " (shard %d of %d: numbers %d, %d, ... of the %d)" % (
        shard_index, shard_count, shard_index, shard_index + shard_count, len(corpus))
    print("PTX of %d conformance programs%s for %s, assembled by %s" % (
        len(programs), shard, ", ".join(args.targets), next((line for line in version.splitlines() if "release" in line), args.ptxas)))

    work = args.keep or tempfile.mkdtemp(prefix="kiln_corpus_ptx_")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(check_one, os.path.abspath(args.kiln), args.ptxas,
                                   os.path.join(args.corpus, program, "module.hlo"), program, target, work)
                       for target in args.targets for program in programs]
            outcomes = [future.result() for future in futures]
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print_table(programs, args.targets, outcomes)
    failed = False
    unimplemented = collections.OrderedDict()
    for o in outcomes:
        if o.unimplemented is not None:
            unimplemented.setdefault(o.program, o.unimplemented)
    if unimplemented:
        print("\n!!! UNIMPLEMENTED on the CUDA backend: %d of %d programs !!!" % (len(unimplemented), len(programs)))
        for program, reason in unimplemented.items():
            print("  UNIMPLEMENTED %s: %s" % (program, reason))
    if args.no_unimplemented and unimplemented:
        print("FAILED: --no-unimplemented, and %d programs are UNIMPLEMENTED" % len(unimplemented))
        failed = True
    elif len(unimplemented) * 2 > len(programs):
        print("FAILED: more than half of the corpus is UNIMPLEMENTED, so this check says little")
        failed = True
    compile_errors = [o for o in outcomes if o.compile_error is not None]
    if compile_errors:
        print("\nFAILED to compile (%d):" % len(compile_errors))
        for o in compile_errors:
            print("  %s %s: %s" % (o.target, o.program, o.compile_error))
        failed = True
    ptxas_errors = [o for o in outcomes if o.ptxas_error is not None]
    if ptxas_errors:
        print("\nFAILED in ptxas (%d):" % len(ptxas_errors))
        for o in ptxas_errors:
            print("  %s %s: %s" % (o.target, o.program, o.ptxas_error))
        failed = True
    if sum(o.kernels for o in outcomes) == 0:
        print("FAILED: no kernel was emitted for any program, so ptxas checked nothing")
        failed = True
    print("\n%s" % ("FAILED" if failed else "PASSED: every PTX module Kiln emitted was accepted by ptxas"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
