#!/usr/bin/env python3
"""Tests of the `kiln` command line tool, one case per ctest test.

Uses only the Python standard library: .npy inputs are written and results
read back by the small codec below, which follows the NumPy format spec.

  cli_test.py --kiln PATH --data DIR --version X.Y.Z CASE
  cli_test.py --list
"""

import argparse
import ast
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading

# --- .npy codec (format 1.0) ---------------------------------------------------

STRUCT_CODES = {"b1": "?", "i1": "b", "i2": "h", "i4": "i", "i8": "q", "u1": "B", "u2": "H",
                "u4": "I", "u8": "Q", "f2": "e", "f4": "f", "f8": "d"}


def npy_bytes(descr, shape, payload, fortran_order=False):
    """A .npy file with raw `payload` bytes, padded as NumPy pads it."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran_order else "False", dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + payload


def npy_array(descr, shape, values, fortran_order=False):
    order, code = descr[0], descr[1:]
    fmt = (">" if order == ">" else "<") + STRUCT_CODES[code] * len(values)
    return npy_bytes(descr, shape, struct.pack(fmt, *values), fortran_order)


def read_npy(path):
    """Returns (descr, shape, values) of a C-order .npy file of a numeric dtype."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise AssertionError("%s: bad magic %r" % (path, data[:6]))
    if data[6] == 1:
        (length,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (length,), start = struct.unpack("<I", data[8:12]), 12
    if (start + length) % 64 != 0:
        raise AssertionError("%s: data does not start on a 64-byte boundary" % path)
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header["fortran_order"]:
        raise AssertionError("%s: written in Fortran order" % path)
    descr, shape = header["descr"], header["shape"]
    count = 1
    for d in shape:
        count *= d
    fmt = (">" if descr[0] == ">" else "<") + STRUCT_CODES[descr[1:]] * count
    payload = data[start + length:]
    if len(payload) != struct.calcsize(fmt):
        raise AssertionError("%s: %d data bytes, expected %d" % (path, len(payload), struct.calcsize(fmt)))
    return descr, shape, list(struct.unpack(fmt, payload))


def safetensors_file(tensors):
    """A safetensors file: {name: (dtype, shape, struct format, values)}, in order."""
    header, data = {}, b""
    for name, (dtype, shape, fmt, values) in tensors.items():
        payload = struct.pack("<" + fmt * len(values), *values)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


# --- test harness --------------------------------------------------------------

class Context:
    def __init__(self, kiln, data, version, work):
        self.kiln, self.data, self.version, self.work = kiln, data, version, work

    def hlo(self, name):
        return os.path.join(self.data, name)

    def path(self, name):
        return os.path.join(self.work, name)

    def write(self, name, content):
        with open(self.path(name), "wb") as f:
            f.write(content)
        return self.path(name)

    def run(self, *args, env=None):
        """Runs kiln with `args`, in the environment with `env`'s variables set."""
        result = subprocess.run([self.kiln] + list(args), capture_output=True, text=True, timeout=120,
                                cwd=self.work, env=dict(os.environ, **env) if env else None)
        if result.returncode < 0:
            raise AssertionError("kiln crashed with signal %d: %s" % (-result.returncode, result.stderr))
        return result


def expect(condition, message, result=None):
    if not condition:
        if result is not None:
            message += "\n  exit code: %d\n  stdout: %r\n  stderr: %r" % (
                result.returncode, result.stdout, result.stderr)
        raise AssertionError(message)


def expect_error(result, code, *needles):
    """Expects exit code 1 and 'kiln: error: CODE: ...' naming every needle."""
    expect(result.returncode == 1, "expected exit code 1", result)
    expect(result.stderr.startswith("kiln: error: %s: " % code), "expected a %s error" % code, result)
    for needle in needles:
        expect(needle in result.stderr, "expected %r in the error" % needle, result)


def expect_usage_error(result, needle):
    expect(result.returncode == 2, "expected exit code 2 (usage error)", result)
    expect(needle in result.stderr and "usage: kiln run" in result.stderr, "expected %r and the usage" % needle,
           result)


CASES = {}


def case(fn):
    CASES[fn.__name__[len("test_"):]] = fn
    return fn


def add_inputs(ctx):
    a = ctx.write("a.npy", npy_array("<f4", (2, 2), [1, 2, 3, 4]))
    b = ctx.write("b.npy", npy_array("<f4", (2, 2), [10, 20, 30, 40]))
    return a, b


# --- cases ---------------------------------------------------------------------

@case
def test_version(ctx):
    result = ctx.run("--version")
    expect(result.returncode == 0 and result.stdout == "kiln %s\n" % ctx.version, "wrong version output", result)


@case
def test_help(ctx):
    result = ctx.run("--help")
    expect(result.returncode == 0 and "usage: kiln run MODULE.hlo" in result.stdout, "wrong help output", result)


@case
def test_usage_errors(ctx):
    expect_usage_error(ctx.run(), "no command given")
    expect_usage_error(ctx.run("frobnicate"), "unknown command 'frobnicate'")
    expect_usage_error(ctx.run("run"), "needs a MODULE.hlo")
    expect_usage_error(ctx.run("run", ctx.hlo("add.hlo"), "--bogus"), "unknown option '--bogus'")
    expect_usage_error(ctx.run("run", ctx.hlo("add.hlo"), "--input"), "--input needs a value")
    expect_usage_error(ctx.run("run", "one.hlo", "two.hlo"), "takes one module file")
    expect_usage_error(ctx.run("run", "m.hlo", "--rng-seed", "-3"), "--rng-seed needs a non-negative integer")
    expect_usage_error(ctx.run("info", "extra"), "takes no arguments")


@case
def test_info(ctx):
    result = ctx.run("info")
    expect(result.returncode == 0, "info failed", result)
    for needle in ("backends:", "interpreter", "devices:", "element types:", "f32"):
        expect(needle in result.stdout, "expected %r in info output" % needle, result)


@case
def test_run_writes_output_dir(ctx):
    a, b = add_inputs(ctx)
    out = ctx.path("results/nested")  # missing directories are created
    result = ctx.run("run", ctx.hlo("add.hlo"), "--input", a, "--input=" + b, "--output-dir", out)
    expect(result.returncode == 0 and result.stdout == "", "run failed", result)
    descr, shape, values = read_npy(os.path.join(out, "0.npy"))
    expect((descr, shape, values) == ("<f4", (2, 2), [11, 22, 33, 44]),
           "wrong result %r" % ((descr, shape, values),))
    expect(sorted(os.listdir(out)) == ["0.npy"], "unexpected files %r" % os.listdir(out))


@case
def test_run_on_interpreter_with_equals_forms(ctx):
    a, b = add_inputs(ctx)
    result = ctx.run("run", "--backend=interpreter", "--input=" + a, "--input=" + b,
                     "--output-dir=" + ctx.path("out"), ctx.hlo("add.hlo"))
    expect(result.returncode == 0, "run failed", result)
    expect(read_npy(ctx.path("out/0.npy"))[2] == [11, 22, 33, 44], "wrong result")


@case
def test_run_prints_results(ctx):
    result = ctx.run("run", ctx.hlo("constant.hlo"))
    expect(result.returncode == 0 and result.stdout == "result 0: f32[2,2] {{1, 2}, {3, 4}}\n",
           "wrong printed result", result)


@case
def test_run_flattens_tuple_results(ctx):
    v = ctx.write("v.npy", npy_array("<f4", (3,), [1, -2, 3.5]))
    n = ctx.write("n.npy", npy_array("<i4", (), [21]))
    result = ctx.run("run", ctx.hlo("tuple_result.hlo"), "--input", v, "--input", n, "--output-dir", ctx.path("o"))
    expect(result.returncode == 0, "run failed", result)
    expect(read_npy(ctx.path("o/0.npy")) == ("<f4", (3,), [-1, 2, -3.5]), "wrong leaf 0")
    expect(read_npy(ctx.path("o/1.npy")) == ("<i4", (), [42]), "wrong leaf 1")
    printed = ctx.run("run", ctx.hlo("tuple_result.hlo"), "--input", v, "--input", n)
    expect(printed.stdout == "result 0: f32[3] {-1, 2, -3.5}\nresult 1: s32[] 42\n", "wrong printing", printed)


@case
def test_run_reads_big_endian_and_fortran_inputs(ctx):
    # Row-major [[1, 2], [3, 4]] stored column-major, and a big-endian operand.
    a = ctx.write("a.npy", npy_array("<f4", (2, 2), [1, 3, 2, 4], fortran_order=True))
    b = ctx.write("b.npy", npy_array(">f4", (2, 2), [10, 20, 30, 40]))
    result = ctx.run("run", ctx.hlo("add.hlo"), "--input", a, "--input", b)
    expect(result.stdout == "result 0: f32[2,2] {{11, 22}, {33, 44}}\n", "wrong result", result)


@case
def test_run_bf16_parameter_takes_v2_data(ctx):
    # bf16 1.0 = 0x3f80, -2.5 = 0xc020, as ml_dtypes saves them ('<V2').
    b = ctx.write("b.npy", npy_bytes("<V2", (2,), struct.pack("<HH", 0x3F80, 0xC020)))
    result = ctx.run("run", ctx.hlo("bf16_input.hlo"), "--input", b)
    expect(result.returncode == 0 and result.stdout == "result 0: f32[2] {1, -2.5}\n", "wrong result", result)


@case
def test_run_timeout_stops_an_endless_loop(ctx):
    # Half a second, not less: on a loaded machine a shorter deadline can pass
    # before the loop starts, and then the error cannot name it.
    for backend in ("interpreter", "cpu"):
        result = ctx.run("run", ctx.hlo("endless_loop.hlo"), "--backend", backend, "--timeout", "0.5")
        expect_error(result, "DEADLINE_EXCEEDED", "in while 'spin' after", "(--timeout 0.5)")
    a, b = add_inputs(ctx)
    result = ctx.run("run", ctx.hlo("add.hlo"), "--input", a, "--input", b, "--timeout=30")
    expect(result.returncode == 0 and result.stdout == "result 0: f32[2,2] {{11, 22}, {33, 44}}\n",
           "a run well within its timeout failed", result)
    for bad in ("0", "-1", "soon", "nan"):
        expect_usage_error(ctx.run("run", ctx.hlo("add.hlo"), "--timeout", bad),
                           "--timeout needs a positive number of seconds")


@case
def test_wrong_input_count(ctx):
    a, _ = add_inputs(ctx)
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", a), "INVALID_ARGUMENT",
                 "expected 2 inputs for ENTRY parameters (f32[2,2], f32[2,2]) but got 1")
    expect_error(ctx.run("run", ctx.hlo("constant.hlo"), "--input", a), "INVALID_ARGUMENT",
                 "expected 0 inputs for ENTRY parameters () but got 1")


@case
def test_wrong_input_dtype(ctx):
    a, _ = add_inputs(ctx)
    ints = ctx.write("ints.npy", npy_array("<i4", (2, 2), [1, 2, 3, 4]))
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", a, "--input", ints), "INVALID_ARGUMENT",
                 "ints.npy", "s32", "ENTRY parameter 1 expects f32[2,2]")
    raw = ctx.write("raw.npy", npy_bytes("<V2", (2, 2), bytes(8)))
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", raw, "--input", a), "INVALID_ARGUMENT",
                 "raw.npy", "V2")


@case
def test_wrong_input_shape(ctx):
    a, _ = add_inputs(ctx)
    wide = ctx.write("wide.npy", npy_array("<f4", (2, 3), [1, 2, 3, 4, 5, 6]))
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", wide, "--input", a), "INVALID_ARGUMENT",
                 "wide.npy", "f32[2,3]", "ENTRY parameter 0 expects f32[2,2]")


@case
def test_malformed_npy(ctx):
    a, _ = add_inputs(ctx)
    junk = ctx.write("junk.npy", b"this is not an array")
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", a, "--input", junk), "INVALID_ARGUMENT",
                 "junk.npy", "not a .npy file")
    good = npy_array("<f4", (2, 2), [1, 2, 3, 4])
    cut = ctx.write("cut.npy", good[:-3])
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", cut, "--input", a), "DATA_LOSS", "cut.npy",
                 "truncated")
    obj = ctx.write("obj.npy", npy_bytes("|O", (2, 2), bytes(32)))
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", obj, "--input", a), "INVALID_ARGUMENT", "obj.npy",
                 "unsupported dtype '|O'")


@case
def test_run_reads_safetensors_inputs(ctx):
    weights = ctx.write("w.safetensors", safetensors_file({
        "x": ("F32", (2, 2), "f", [1, 2, 3, 4]),
        "y": ("F32", (2, 2), "f", [10, 20, 30, 40]),
        "wide": ("F32", (2, 3), "f", [1, 2, 3, 4, 5, 6]),
    }))
    result = ctx.run("run", ctx.hlo("add.hlo"), "--input", weights + ":y", "--input", weights + ":x",
                     "--output-dir", ctx.path("out"))
    expect(result.returncode == 0, "run failed", result)
    expect(read_npy(ctx.path("out/0.npy")) == ("<f4", (2, 2), [11, 22, 33, 44]), "wrong result")
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", weights + ":x", "--input", weights + ":z"),
                 "NOT_FOUND", "no tensor named 'z'", "x, y, wide")
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", weights + ":wide", "--input", weights + ":x"),
                 "INVALID_ARGUMENT", "w.safetensors:wide", "f32[2,3]", "ENTRY parameter 0 expects f32[2,2]")
    broken = ctx.write("broken.safetensors", struct.pack("<Q", 5) + b"{oops")
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", broken + ":x", "--input", weights + ":x"),
                 "INVALID_ARGUMENT", "broken.safetensors", "not valid JSON")
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", "absent.safetensors:x", "--input", weights + ":x"),
                 "NOT_FOUND", "absent.safetensors")


@case
def test_missing_files(ctx):
    a, _ = add_inputs(ctx)
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", a, "--input", "absent.npy"), "NOT_FOUND",
                 "absent.npy")
    expect_error(ctx.run("run", "absent.hlo"), "NOT_FOUND", "absent.hlo")


@case
def test_malformed_hlo(ctx):
    result = ctx.run("run", ctx.hlo("malformed.hlo"))
    expect_error(result, "INVALID_ARGUMENT", "malformed.hlo", "line ", "column ")
    empty = ctx.write("empty.hlo", b"")
    expect_error(ctx.run("run", empty), "INVALID_ARGUMENT", "empty.hlo")
    # Well-formed text naming an op Kiln does not have is UNIMPLEMENTED, at its place.
    unknown = ctx.write("unknown_op.hlo", b"HloModule m\n\nENTRY main {\n  x = f32[2] parameter(0)\n"
                        b"  ROOT y = f32[2] frobnicate(x, x)\n}\n")
    expect_error(ctx.run("run", unknown), "UNIMPLEMENTED", "unknown_op.hlo", "line 5, column 19",
                 "unsupported op 'frobnicate'")


@case
def test_unknown_backend(ctx):
    expect_error(ctx.run("run", ctx.hlo("constant.hlo"), "--backend", "nosuch"), "NOT_FOUND",
                 "unknown backend 'nosuch'", "interpreter")
    # Reported before the missing inputs of add.hlo.
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--backend=nosuch"), "NOT_FOUND", "unknown backend 'nosuch'")


@case
def test_output_dir_is_a_file(ctx):
    blocker = ctx.write("blocker", b"")
    result = ctx.run("run", ctx.hlo("constant.hlo"), "--output-dir", blocker)
    expect(result.returncode == 1 and result.stderr.startswith("kiln: error: ") and "blocker" in result.stderr,
           "expected an error naming the output path", result)


# --- kiln run: random inputs, comparisons, dumps, progress, help ------------------

@case
def test_command_help(ctx):
    run_help = ctx.run("run", "--help")
    expect(run_help.returncode == 0 and run_help.stdout.startswith("usage: kiln run MODULE.hlo"),
           "'kiln run --help' should print run's usage", run_help)
    for needle in ("--random-inputs", "--seed", "--compare-with", "--expect", "--rtol", "--dump-hlo", "--dump-ir",
                   "--progress"):
        expect(needle in run_help.stdout, "expected %r in run's help" % needle, run_help)
    expect("kiln bench" not in run_help.stdout, "run's help should not describe bench", run_help)
    expect(ctx.run("run", ctx.hlo("add.hlo"), "-h").stdout == run_help.stdout, "-h differs from --help")
    bench_help = ctx.run("bench", "--help")
    expect(bench_help.returncode == 0 and bench_help.stdout.startswith("usage: kiln bench MODULE.hlo")
           and "--iterations" in bench_help.stdout and "--random-inputs" not in bench_help.stdout,
           "'kiln bench --help' should print bench's help", bench_help)
    info_help = ctx.run("info", "--help")
    expect(info_help.returncode == 0 and info_help.stdout.startswith("usage: kiln info"),
           "'kiln info --help' should print info's help", info_help)
    overview = ctx.run("--help")
    expect("kiln bench MODULE.hlo" in overview.stdout and "kiln COMMAND --help" in overview.stdout,
           "the overview lists every command", overview)


def echo_random_inputs(ctx, *args):
    """Runs echo_types.hlo (which returns its parameters) on random inputs; returns the leaves' values."""
    out = ctx.path("echo_%d" % len(os.listdir(ctx.work)))
    result = ctx.run("run", ctx.hlo("echo_types.hlo"), "--random-inputs", "--output-dir", out, *args)
    expect(result.returncode == 0 and result.stderr == "", "run with --random-inputs failed", result)
    return [read_npy(os.path.join(out, "%d.npy" % i)) for i in range(5)]


@case
def test_random_inputs(ctx):
    f32, f64, s32, u8, pred = echo_random_inputs(ctx)
    expect([leaf[:2] for leaf in (f32, f64, s32, u8, pred)] ==
           [("<f4", (64,)), ("<f8", (64,)), ("<i4", (64,)), ("|u1", (64,)), ("|b1", (64,))],
           "random inputs have the parameters' types and shapes")
    for name, values, low, high in (("f32", f32[2], -1, 1), ("f64", f64[2], -1, 1), ("s32", s32[2], -8, 8),
                                    ("u8", u8[2], 0, 16)):
        expect(all(low <= v < high for v in values), "%s values outside [%d, %d): %r" % (name, low, high, values))
        expect(len(set(values)) > 4, "%s values barely vary: %r" % (name, values))
    expect(min(f64[2]) < -0.5 and max(f64[2]) > 0.5, "f64 values do not spread over [-1, 1)")
    expect(min(s32[2]) < 0 <= max(s32[2]), "s32 values are not of both signs")
    expect(set(pred[2]) == {False, True}, "pred values are not both false and true")
    # The seed decides the values, and --seed 0 is the default.
    expect(echo_random_inputs(ctx, "--seed", "0") == [f32, f64, s32, u8, pred], "the default seed is 0")
    expect(echo_random_inputs(ctx, "--seed=0") == [f32, f64, s32, u8, pred], "equal seeds, unequal values")
    other = echo_random_inputs(ctx, "--seed", "12345")
    expect(other[0][2] != f32[2] and other[2][2] != s32[2], "another seed gives the same values")
    interpreted = echo_random_inputs(ctx, "--backend", "interpreter")
    expect(interpreted == [f32, f64, s32, u8, pred], "the values depend on the backend")


@case
def test_run_option_usage_errors(ctx):
    a, _ = add_inputs(ctx)
    hlo = ctx.hlo("add.hlo")
    expect_usage_error(ctx.run("run", hlo, "--random-inputs", "--input", a), "cannot be combined")
    expect_usage_error(ctx.run("run", hlo, "--seed", "3"), "--seed sets the values of --random-inputs")
    expect_usage_error(ctx.run("run", hlo, "--random-inputs", "--seed", "x"), "--seed needs a non-negative integer")
    expect_usage_error(ctx.run("run", hlo, "--random-inputs", "--rtol", "0.1"), "--rtol and --atol")
    expect_usage_error(ctx.run("run", hlo, "--expect", "d", "--atol", "-1"), "--atol needs a non-negative number")
    expect_usage_error(ctx.run("run", hlo, "--expect", "d", "--rtol", "nan"), "--rtol needs a non-negative number")
    expect_usage_error(ctx.run("run", hlo, "--compare-with="), "--compare-with needs a backend name")
    for option in ("--expect", "--dump-hlo", "--dump-ir"):
        expect_usage_error(ctx.run("run", hlo, option + "="), "%s needs a non-empty path" % option)
    expect_usage_error(ctx.run("run", hlo, "--random-inputs=1"), "unknown option '--random-inputs=1'")


@case
def test_compare_with_another_backend(ctx):
    result = ctx.run("run", ctx.hlo("echo_types.hlo"), "--random-inputs", "--compare-with", "interpreter",
                     "--output-dir", ctx.path("out"))
    expect(result.returncode == 0, "comparison with the interpreter failed", result)
    lines = result.stdout.splitlines()
    expect(len(lines) == 5, "expected one line per result leaf", result)
    expect(lines[0].startswith("interpreter: result 0 f32[64] agrees (max |difference| 0, rtol "),
           "expected leaf 0 to agree", result)
    expect(lines[2] == "interpreter: result 2 s32[64] agrees", "integers are compared exactly", result)
    expect_error(ctx.run("run", ctx.hlo("constant.hlo"), "--compare-with", "nosuch"), "NOT_FOUND",
                 "unknown backend 'nosuch'")


@case
def test_expect_directory(ctx):
    a, b = add_inputs(ctx)
    run = ("run", ctx.hlo("add.hlo"), "--input", a, "--input", b, "--output-dir", ctx.path("out"))
    os.makedirs(ctx.path("right"))
    ctx.write("right/0.npy", npy_array("<f4", (2, 2), [11, 22, 33, 44]))
    result = ctx.run(*run, "--expect", ctx.path("right"))
    expect(result.returncode == 0 and result.stdout.startswith(ctx.path("right") + ": result 0 f32[2,2] agrees"),
           "expected the results to agree", result)
    # The conformance corpus names expected results outN.npy.
    os.makedirs(ctx.path("wrong"))
    ctx.write("wrong/out0.npy", npy_array("<f4", (2, 2), [11, 22, 33, 45]))
    result = ctx.run(*run, "--expect", ctx.path("wrong"))
    expect(result.returncode == 3, "expected exit status 3 for results that differ", result)
    expect("DIFFERS: element 3 is 44 but expected 45; 1 of 4 elements differ" in result.stdout,
           "expected the first difference and the count", result)
    expect("results differ" in result.stderr, "expected a closing message on stderr", result)
    expect("note:" not in result.stdout, "a note on f16 sums where the module has none", result)
    expect(read_npy(ctx.path("out/0.npy"))[2] == [11, 22, 33, 44], "the results are written all the same")
    loose = ctx.run(*run, "--expect", ctx.path("wrong"), "--atol", "1", "--rtol=0")
    expect(loose.returncode == 0 and "agrees (max |difference| 1, rtol 0, atol 1)" in loose.stdout,
           "--atol 1 should accept a difference of 1", loose)
    expect_error(ctx.run(*run, "--expect", ctx.path("nothing")), "NOT_FOUND", "is not a directory")
    os.makedirs(ctx.path("short"))
    expect_error(ctx.run(*run, "--expect", ctx.path("short")), "NOT_FOUND", "no expected result 0")
    ctx.write("right/1.npy", npy_array("<f4", (1,), [0]))
    expect_error(ctx.run(*run, "--expect", ctx.path("right")), "INVALID_ARGUMENT", "more expected results")


def info_matches(ctx, pattern):
    """Whether `kiln info`'s report matches the multi-line regular expression `pattern`."""
    info = ctx.run("info")
    expect(info.returncode == 0, "info failed", info)
    return re.search(pattern, info.stdout, re.MULTILINE) is not None


def has_vulkan_device(ctx):
    """Whether `kiln info` lists a vulkan device (lavapipe where there is no GPU)."""
    return info_matches(ctx, r"^  vulkan\n    devices:")


@case
def test_compare_notes_narrow_float_sums(ctx):
    # 4096 f16 ones: the interpreter adds them in order in f16, which stalls
    # at 2048 (2048 + 1 rounds to 2048); summed in f32 and rounded once, as
    # vulkan and JAX's jnp.sum do, they are 4096. XLA leaves that open, and
    # a difference says so.
    hlo = ctx.hlo("f16_sum.hlo")
    ones = ctx.write("ones.npy", npy_array("<f2", (4096,), [1.0] * 4096))
    run = ("run", hlo, "--backend", "interpreter", "--input", ones, "--expect")
    for name, value in (("in_f32", 4096.0), ("in_order", 2048.0)):
        os.makedirs(ctx.path(name))
        ctx.write(name + "/0.npy", npy_array("<f2", (), [value]))
    note = (": note: reduce 'total' adds f16 elements, in an order and precision XLA leaves open: the "
            "interpreter adds them one by one in f16, vulkan in f32 rounded once, so a long sum can differ "
            "beyond the tolerance")
    result = ctx.run(*run, ctx.path("in_f32"))
    expect(result.returncode == 3 and "DIFFERS: element 0 is 2048 but expected 4096" in result.stdout,
           "expected the interpreter's stalled sum to differ", result)
    expect(ctx.path("in_f32") + note + "\n" in result.stdout, "expected the note after the results", result)
    agreeing = ctx.run(*run, ctx.path("in_order"))
    expect(agreeing.returncode == 0 and "note:" not in agreeing.stdout, "no note where the results agree",
           agreeing)
    if not has_vulkan_device(ctx):
        print("no vulkan device (install lavapipe: .ci/install-deps): vulkan against the interpreter not run")
        return
    on_vulkan = ctx.run("run", hlo, "--backend", "vulkan", "--input", ones, "--compare-with", "interpreter",
                        env={"XDG_CACHE_HOME": ctx.path("cache")})
    expect(on_vulkan.returncode == 3 and on_vulkan.stdout.startswith("result 0: f16[] 4096\n"),
           "expected vulkan's f32 sum", on_vulkan)
    expect("interpreter" + note + "\n" in on_vulkan.stdout, "expected the note on vulkan's sum", on_vulkan)


@case
def test_dump_hlo(ctx):
    a, b = add_inputs(ctx)
    for backend in ("cpu", "interpreter"):
        dump = ctx.path("hlo_" + backend)
        result = ctx.run("run", ctx.hlo("add.hlo"), "--backend", backend, "--input", a, "--input", b,
                         "--dump-hlo", dump)
        expect(result.returncode == 0, "run with --dump-hlo failed", result)
        names = sorted(os.listdir(dump))
        expect(names == ["add_module.after_passes.hlo", "add_module.before_passes.hlo"],
               "unexpected dump files %r on %s" % (names, backend))
        # Each dump is a module kiln runs with the same results.
        for name in names:
            rerun = ctx.run("run", os.path.join(dump, name), "--input", a, "--input", b)
            expect(rerun.stdout == "result 0: f32[2,2] {{11, 22}, {33, 44}}\n", "the dump %s runs differently"
                   % name, rerun)


@case
def test_dump_ir(ctx):
    a, b = add_inputs(ctx)
    run = ("run", ctx.hlo("add.hlo"), "--input", a, "--input", b)
    # An object cache on disk must not keep a dumping compile from emitting IR.
    os.environ["KILN_CACHE_DIR"] = ctx.path("object_cache")
    expect(ctx.run(*run).returncode == 0, "run to fill the object cache failed")
    expect(os.listdir(ctx.path("object_cache")), "the object cache stayed empty")
    dump = ctx.path("ir")
    result = ctx.run(*run, "--backend", "cpu", "--dump-ir", dump)
    expect(result.returncode == 0, "run with --dump-ir failed", result)
    names = sorted(os.listdir(dump))
    expect(names and len(names) % 2 == 0, "expected pairs of IR files, got %r" % names)
    for name in names:
        expect(name.startswith("add_module.kernels.") and
               (name.endswith(".emitted.ll") or name.endswith(".optimized.ll")), "unexpected file %s" % name)
        with open(os.path.join(dump, name)) as f:
            expect("define " in f.read(), "%s holds no function" % name)
    expect_error(ctx.run(*run, "--backend", "interpreter", "--dump-ir", ctx.path("ir2")), "UNIMPLEMENTED",
                 "interpreter", "LLVM IR")


@case
def test_progress(ctx):
    a, b = add_inputs(ctx)
    run = ("run", ctx.hlo("add.hlo"), "--input", a, "--input", b, "--compare-with", "interpreter")
    quiet = ctx.run(*run)
    expect(quiet.returncode == 0 and quiet.stderr == "", "without --progress and a terminal, stderr is quiet",
           quiet)
    result = ctx.run(*run, "--progress")
    expect(result.returncode == 0 and result.stdout == quiet.stdout, "--progress changed the output", result)
    lines = result.stderr.splitlines()
    phases = ["parsing " + ctx.hlo("add.hlo"), "compiling on cpu", "running on cpu", "compiling on interpreter",
              "running on interpreter"]
    expect(len(lines) == 2 * len(phases), "expected a start and an end line per phase", result)
    for i, phase in enumerate(phases):
        expect(lines[2 * i] == "kiln: %s ..." % phase, "expected phase %r to start" % phase, result)
        expect(re.fullmatch(r"kiln: %s \.\.\. done in [0-9]+\.[0-9] m?s" % re.escape(phase), lines[2 * i + 1]),
               "expected phase %r to end" % phase, result)


# --- kiln bench ------------------------------------------------------------------

BENCH_FIELDS = ("module", "backend", "threads", "compile_ms", "upload_ms", "warmup", "iterations", "best_us",
                "median_us", "mean_us", "worst_us")


def bench_json(ctx, *args):
    result = ctx.run("bench", *args, "--json")
    expect(result.returncode == 0, "bench failed", result)
    lines = result.stdout.splitlines()
    expect(len(lines) == 1, "expected one JSON line", result)
    return json.loads(lines[0]), result


@case
def test_bench_json_fields(ctx):
    a, b = add_inputs(ctx)
    report, result = bench_json(ctx, ctx.hlo("add.hlo"), "--backend", "interpreter", "--input", a, "--input", b,
                                "--iterations", "3", "--warmup=1", "--threads", "1")
    expect(sorted(report) == sorted(BENCH_FIELDS), "wrong JSON fields %r" % sorted(report), result)
    expect(report["backend"] == "interpreter" and report["module"].endswith("add.hlo"), "wrong names", result)
    expect(report["iterations"] == 3 and report["warmup"] == 1 and report["threads"] == 1, "wrong counts", result)
    expect(report["compile_ms"] >= 0 and report["upload_ms"] >= 0, "negative times", result)
    expect(0 <= report["best_us"] <= report["median_us"] <= report["worst_us"], "unordered statistics", result)
    expect(report["best_us"] <= report["mean_us"] <= report["worst_us"], "mean outside best..worst", result)


@case
def test_bench_min_time_runs_at_least_once(ctx):
    report, result = bench_json(ctx, ctx.hlo("constant.hlo"), "--min-time", "0", "--warmup", "0")
    expect(report["iterations"] >= 1 and report["warmup"] == 0, "expected at least one timed run", result)


@case
def test_bench_text_report(ctx):
    a, b = add_inputs(ctx)
    result = ctx.run("bench", ctx.hlo("add.hlo"), "--input", a, "--input", b, "--iterations", "2")
    expect(result.returncode == 0, "bench failed", result)
    for needle in ("module:", "backend:", "compile:", " ms", "executions:  2 timed after 2 warm-up",
                   "per execute: best "):
        expect(needle in result.stdout, "expected %r in the report" % needle, result)


@case
def test_bench_writes_last_results(ctx):
    a, b = add_inputs(ctx)
    out = ctx.path("bench_out")
    bench_json(ctx, ctx.hlo("add.hlo"), "--input", a, "--input", b, "--iterations", "2", "--output-dir", out)
    expect(read_npy(os.path.join(out, "0.npy")) == ("<f4", (2, 2), [11, 22, 33, 44]), "wrong bench result")


@case
def test_bench_usage_errors(ctx):
    hlo = ctx.hlo("add.hlo")
    expect_usage_error(ctx.run("bench"), "'kiln bench' needs a MODULE.hlo")
    expect_usage_error(ctx.run("bench", hlo, "--iterations", "0"), "--iterations needs a positive integer")
    expect_usage_error(ctx.run("bench", hlo, "--iterations", "many"), "--iterations needs a positive integer")
    expect_usage_error(ctx.run("bench", hlo, "--warmup", "-1"), "--warmup needs a non-negative integer")
    expect_usage_error(ctx.run("bench", hlo, "--min-time", "soon"), "--min-time needs a number of seconds")
    expect_usage_error(ctx.run("bench", hlo, "--min-time", "-2"), "--min-time needs a number of seconds")
    expect_usage_error(ctx.run("bench", hlo, "--threads", "x"), "--threads needs a thread count")
    expect_usage_error(ctx.run("bench", hlo, "--rng-seed", "1"), "unknown option '--rng-seed' for 'kiln bench'")
    expect_usage_error(ctx.run("bench", hlo, "other.hlo"), "'kiln bench' takes one module file")


@case
def test_bench_runtime_errors(ctx):
    a, _ = add_inputs(ctx)
    expect_error(ctx.run("bench", ctx.hlo("add.hlo"), "--input", a), "INVALID_ARGUMENT",
                 "expected 2 inputs for ENTRY parameters (f32[2,2], f32[2,2]) but got 1")
    expect_error(ctx.run("bench", ctx.hlo("constant.hlo"), "--backend", "nosuch"), "NOT_FOUND",
                 "unknown backend 'nosuch'")
    expect_error(ctx.run("bench", ctx.hlo("malformed.hlo")), "INVALID_ARGUMENT", "malformed.hlo")
    expect_error(ctx.run("bench", "absent.hlo"), "NOT_FOUND", "absent.hlo")


# --- limits ----------------------------------------------------------------------

class PipeWriter:
    """Writes `data` (then zeros for ever when `endless`) into a new FIFO until
    the reader closes it; `written` counts the bytes that went in."""

    def __init__(self, path, data, endless=False):
        os.mkfifo(path)
        self.path, self.written = path, 0
        self.thread = threading.Thread(target=self._write, args=(data, endless))
        self.thread.start()

    def _write(self, data, endless):
        try:
            with open(self.path, "wb", buffering=0) as f:
                self._put(f, data)
                while endless:
                    self._put(f, bytes(1 << 16))
        except (BrokenPipeError, OSError):
            pass

    def _put(self, f, data):
        view = memoryview(data)
        while view:
            done = f.write(view)
            self.written += done
            view = view[done:]

    def join(self):
        self.thread.join(timeout=60)
        expect(not self.thread.is_alive(), "the writer of %s never finished" % self.path)
        return self.written


@case
def test_module_from_a_device_or_a_pipe(ctx):
    # /dev/zero used to be read until memory ran out.
    expect_error(ctx.run("run", "/dev/zero"), "INVALID_ARGUMENT", "/dev/zero", "byte 0 is NUL",
                 "not HLO text")
    with open(ctx.hlo("constant.hlo"), "rb") as f:
        writer = PipeWriter(ctx.path("module.hlo"), f.read())
    result = ctx.run("run", ctx.path("module.hlo"))
    writer.join()
    expect(result.returncode == 0 and result.stdout == "result 0: f32[2,2] {{1, 2}, {3, 4}}\n",
           "a module from a pipe should run", result)


@case
def test_input_from_a_device_or_a_pipe(ctx):
    a, _ = add_inputs(ctx)
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", a, "--input", "/dev/zero"), "INVALID_ARGUMENT",
                 "/dev/zero", "not a .npy file")
    # A header declaring 4 TiB where f32[2,2] is expected, then zeros for ever:
    # refused from the header, so at most a pipe's buffer of data is written.
    writer = PipeWriter(ctx.path("huge.npy"), npy_bytes("<f4", (1 << 40,), b""), endless=True)
    result = ctx.run("run", ctx.hlo("add.hlo"), "--input", ctx.path("huge.npy"), "--input", a)
    written = writer.join()
    expect_error(result, "INVALID_ARGUMENT", "huge.npy", "f32[1099511627776]", "ENTRY parameter 0 expects f32[2,2]")
    expect(written < (1 << 24), "kiln read %d bytes of a pipe it should have refused" % written)
    # A pipe holding the array and more.
    writer = PipeWriter(ctx.path("longer.npy"), npy_array("<f4", (2, 2), [1, 2, 3, 4]), endless=True)
    result = ctx.run("run", ctx.hlo("add.hlo"), "--input", ctx.path("longer.npy"), "--input", a)
    writer.join()
    expect_error(result, "INVALID_ARGUMENT", "longer.npy", "unexpected bytes after the 16 bytes of array data")
    # And one holding just the array works like a file.
    writer = PipeWriter(ctx.path("exact.npy"), npy_array("<f4", (2, 2), [1, 2, 3, 4]))
    result = ctx.run("run", ctx.hlo("add.hlo"), "--input", ctx.path("exact.npy"), "--input", a)
    writer.join()
    expect(result.returncode == 0 and result.stdout == "result 0: f32[2,2] {{2, 4}, {6, 8}}\n",
           "an input from a pipe should be read", result)


@case
def test_input_larger_than_its_parameter(ctx):
    # A sparse regular file as large as its header claims (4 TiB) used to be
    # read whole; its header is refused before any data.
    a, _ = add_inputs(ctx)
    huge = ctx.write("huge.npy", npy_bytes("<f4", (1 << 40,), b""))
    with open(huge, "r+b") as f:
        f.truncate(os.path.getsize(huge) + (4 << 40))
    expect_error(ctx.run("run", ctx.hlo("add.hlo"), "--input", huge, "--input", a), "INVALID_ARGUMENT",
                 "huge.npy", "has shape f32[1099511627776] but ENTRY parameter 0 expects f32[2,2]")


@case
def test_allow_unsafe_nan_math(ctx):
    # The flag reaches CompileOptions; backends that keep NaN (the interpreter
    # here) compile with it and give NaN-exact results. The refusal it lifts
    # is tested in tests/vulkan/nan_refusal_test.cc on a faked device.
    hlo = ctx.write("finite.hlo", b"HloModule finite\nENTRY e {\n  x = f32[4] parameter(0)\n"
                    b"  ROOT f = pred[4] is-finite(x)\n}\n")
    x = ctx.write("x.npy", npy_bytes("<f4", (4,), struct.pack("<4f", 1, float("nan"), float("inf"), 0)))
    result = ctx.run("run", hlo, "--backend", "interpreter", "--input", x, "--allow-unsafe-nan-math")
    expect(result.returncode == 0 and "{true, false, false, true}" in result.stdout, "run with the flag", result)
    result = ctx.run("bench", hlo, "--backend", "interpreter", "--input", x, "--iterations", "1",
                     "--allow-unsafe-nan-math")
    expect(result.returncode == 0, "bench with the flag", result)
    for command in ("run", "bench"):
        result = ctx.run(command, "--help")
        expect(result.returncode == 0 and "--allow-unsafe-nan-math" in result.stdout, "help names the flag", result)
    expect_usage_error(ctx.run("run", hlo, "--allow-unsafe-nan-math=1"), "unknown option '--allow-unsafe-nan-math=1'")


@case
def test_thread_limit(ctx):
    # The limit is 4 per hardware thread and never below 16.
    limit = max(16, 4 * os.cpu_count())
    hlo = ctx.hlo("constant.hlo")
    result = ctx.run("bench", hlo, "--threads", str(limit + 1))
    expect_usage_error(result, "--threads")
    expect("at most %d threads" % limit in result.stderr, "expected the limit %d in the error" % limit, result)
    report, _ = bench_json(ctx, hlo, "--backend", "interpreter", "--threads", str(limit), "--iterations", "1")
    expect(report["threads"] == limit, "wrong thread count in %r" % report)
    expect_usage_error(ctx.run("run", hlo, "--backend", ""), "--backend needs a non-empty name")


# --- kiln compile ----------------------------------------------------------------

def has_cuda_backend(ctx):
    """Whether this kiln has the CUDA backend (`kiln info` lists it, usable here or not)."""
    return info_matches(ctx, r"^  cuda\b")


@case
def test_compile_ptx(ctx):
    out = ctx.path("ptx/nested")  # missing directories are created
    result = ctx.run("compile", ctx.hlo("add.hlo"), "--backend", "cuda", "--target", "sm_80", "--emit", "ptx",
                     "--output-dir", out)
    if not has_cuda_backend(ctx):
        expect_usage_error(result, "without the CUDA backend")
        return
    path = os.path.join(out, "add.ptx")
    wrote = re.fullmatch(r"wrote (.+): (\d+) kernels? for sm_80\n", result.stdout)
    expect(result.returncode == 0 and wrote is not None and wrote.group(1) == path, "compile failed", result)
    with open(path) as f:
        ptx = f.read()
    expect(re.search(r"^\.target sm_80\b", ptx, re.MULTILINE), "the PTX does not target sm_80")
    entries = len(re.findall(r"\.entry\s", ptx))
    expect(entries >= 1 and entries == int(wrote.group(2)), "%d .entry in the PTX, %s reported" % (
        entries, wrote.group(2)), result)
    expect(sorted(os.listdir(out)) == ["add.ptx"], "unexpected files %r" % os.listdir(out))
    # --name=VALUE forms; the output directory defaults to the current one.
    again = ctx.run("compile", "--backend=cuda", "--emit=ptx", "--target=sm_90", ctx.hlo("add.hlo"))
    expect(again.returncode == 0, "compile with = forms failed", again)
    with open(ctx.path("add.ptx")) as f:
        expect(re.search(r"^\.target sm_90\b", f.read(), re.MULTILINE), "the PTX does not target sm_90")


@case
def test_compile_usage_errors(ctx):
    hlo = ctx.hlo("add.hlo")
    cuda = has_cuda_backend(ctx)
    bad_target = ctx.run("compile", hlo, "--backend", "cuda", "--emit", "ptx", "--target", "sm_1x")
    expect_usage_error(bad_target, "sm_1x" if cuda else "without the CUDA backend")
    expect_usage_error(ctx.run("compile", hlo, "--backend", "cuda", "--emit", "llvm", "--target", "sm_80"),
                       "--emit accepts only 'ptx', got 'llvm'")
    expect_usage_error(ctx.run("compile", hlo, "--backend", "cpu", "--emit", "ptx", "--target", "sm_80"),
                       "--emit ptx needs --backend cuda, got 'cpu'")
    expect_usage_error(ctx.run("compile", hlo, "--backend", "cuda", "--target", "sm_80"), "needs --emit")
    expect_usage_error(ctx.run("compile", hlo, "--backend", "cuda", "--emit", "ptx"), "needs --target")
    expect_usage_error(ctx.run("compile", "--backend", "cuda"), "needs a MODULE.hlo")
    expect(not os.listdir(ctx.work), "a refused compile wrote %r" % os.listdir(ctx.work))
    help_text = ctx.run("compile", "--help")
    expect(help_text.returncode == 0 and help_text.stdout.startswith("usage: kiln compile MODULE.hlo"),
           "'kiln compile --help' should print compile's usage", help_text)
    expect("kiln compile MODULE.hlo" in ctx.run("--help").stdout, "the overview lists compile")


# --- kiln grad ------------------------------------------------------------------

@case
def test_grad_of_a_scalar_loss_runs(ctx):
    # loss = sum(sin(x * w)): d/dw = cos(x * w) * x, d/dx = cos(x * w) * w.
    out_hlo = ctx.path("grad.hlo")
    result = ctx.run("grad", ctx.hlo("grad_loss.hlo"), "--wrt", "1,0", "--output", out_hlo)
    expect(result.returncode == 0, "grad failed", result)
    expect(result.stdout.startswith("wrote %s: ENTRY (x: f32[3], w: f32[3]) -> (f32[], f32[3], f32[3]);" % out_hlo)
           and "2 parameter(s) then 0 cotangent(s)" in result.stdout and result.stdout.count("\n") == 1,
           "expected a one-line summary", result)
    xs, ws = [0.5, -1.0, 2.0], [1.5, 0.25, -0.75]
    x = ctx.write("x.npy", npy_array("<f4", (3,), xs))
    w = ctx.write("w.npy", npy_array("<f4", (3,), ws))
    run = ctx.run("run", out_hlo, "--input", x, "--input", w, "--output-dir", ctx.path("out"))
    expect(run.returncode == 0, "running the gradient module failed", run)
    import math
    expected = [
        [sum(math.sin(a * b) for a, b in zip(xs, ws))],
        [math.cos(a * b) * a for a, b in zip(xs, ws)],
        [math.cos(a * b) * b for a, b in zip(xs, ws)],
    ]
    for leaf, want in enumerate(expected):
        got = read_npy(ctx.path("out/%d.npy" % leaf))[2]
        expect(len(got) == len(want) and all(abs(g - e) <= 1e-5 * (1 + abs(e)) for g, e in zip(got, want)),
               "leaf %d: got %r, expected %r" % (leaf, got, want))


@case
def test_grad_takes_a_cotangent_per_result_leaf(ctx):
    out_hlo = ctx.path("add_grad.hlo")
    result = ctx.run("grad", ctx.hlo("add.hlo"), "--wrt=1", "--output=" + out_hlo)
    expect(result.returncode == 0 and "2 parameter(s) then 1 cotangent(s)" in result.stdout, "grad failed", result)
    a, b = add_inputs(ctx)
    cotangent = ctx.write("c.npy", npy_array("<f4", (2, 2), [1, -2, 0.5, 4]))
    run = ctx.run("run", out_hlo, "--input", a, "--input", b, "--input", cotangent, "--output-dir", ctx.path("out"))
    expect(run.returncode == 0, "running the gradient module failed", run)
    expect(read_npy(ctx.path("out/0.npy"))[2] == [11, 22, 33, 44], "the original result comes first")
    expect(read_npy(ctx.path("out/1.npy"))[2] == [1, -2, 0.5, 4], "d(x + y)/dy passes the cotangent through")


@case
def test_grad_through_a_while_loop(ctx):
    # x <- x * a + sin(x) while |x| < 10: the trip count depends on the inputs.
    out_hlo = ctx.path("grad_while.hlo")
    result = ctx.run("grad", ctx.hlo("grad_while.hlo"), "--wrt", "0,1", "--output", out_hlo)
    expect(result.returncode == 0 and "2 parameter(s) then 0 cotangent(s)" in result.stdout, "grad failed", result)
    with open(out_hlo) as f:
        text = f.read()
    expect('custom_call_target="kiln_tape_push"' in text and 'custom_call_target="kiln_tape_pop"' in text,
           "the forward loop pushes its state on a tape that the backward loop pops")
    import math
    x0, a = 0.5, 1.3
    x, dx, da, trips = x0, 1.0, 0.0, 0
    while abs(x) < 10:
        slope = a + math.cos(x)
        x, dx, da, trips = x * a + math.sin(x), slope * dx, slope * da + x, trips + 1
    expect(trips > 3, "the loop should run a few times, ran %d" % trips)
    xs = ctx.write("x.npy", npy_array("<f4", (), [x0]))
    as_ = ctx.write("a.npy", npy_array("<f4", (), [a]))
    for backend in ("interpreter", "cpu"):
        out = ctx.path("out_" + backend)
        run = ctx.run("run", out_hlo, "--backend", backend, "--input", xs, "--input", as_, "--output-dir", out)
        expect(run.returncode == 0, "running the gradient module on %s failed" % backend, run)
        for leaf, want in enumerate([x, dx, da]):
            got = read_npy(os.path.join(out, "%d.npy" % leaf))[2][0]
            expect(abs(got - want) <= 1e-3 * (1 + abs(want)),
                   "%s leaf %d: got %r, expected %r" % (backend, leaf, got, want))


@case
def test_grad_errors(ctx):
    help_text = ctx.run("grad", "--help")
    expect(help_text.returncode == 0 and help_text.stdout.startswith("usage: kiln grad MODULE.hlo --wrt"),
           "'kiln grad --help' should print grad's help", help_text)
    expect_usage_error(ctx.run("grad", ctx.hlo("add.hlo"), "--output", ctx.path("o.hlo")), "needs --wrt")
    expect_usage_error(ctx.run("grad", ctx.hlo("add.hlo"), "--wrt", "0"), "needs --output")
    expect_usage_error(ctx.run("grad", ctx.hlo("add.hlo"), "--wrt", "0,x", "--output", ctx.path("o.hlo")),
                       "--wrt needs parameter numbers")
    expect_error(ctx.run("grad", ctx.hlo("add.hlo"), "--wrt", "0,2", "--output", ctx.path("o.hlo")),
                 "INVALID_ARGUMENT", "parameter 2", "has 2 parameters")
    expect(not os.path.exists(ctx.path("o.hlo")), "nothing is written on an error")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln")
    parser.add_argument("--data")
    parser.add_argument("--version")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("case", nargs="?")
    args = parser.parse_args()
    if args.list:
        print(";".join(CASES))
        return 0
    if args.case not in CASES:
        print("unknown case %r" % args.case, file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="kiln_cli_")
    try:
        CASES[args.case](Context(os.path.abspath(args.kiln), os.path.abspath(args.data), args.version, work))
    except (AssertionError, subprocess.TimeoutExpired) as error:
        print("FAILED %s: %s" % (args.case, error), file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASSED %s" % args.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
