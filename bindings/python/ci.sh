#!/usr/bin/env bash
# Lints and tests the Python binding, and runs its sample, against a built libkiln.
#   bindings/python/ci.sh BUILD_DIR      (BUILD_DIR relative to the repo root, e.g. build/release)
# Creates bindings/python/.venv on first use (numpy, pytest, ruff, ml_dtypes,
# safetensors (interop tests) and this package, editable); later runs reuse it.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR   (the CMake build directory holding capi/libkiln.so, relative to the repo root)" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
libdir="$root/$1/capi"
if [ ! -e "$libdir/libkiln.so.0" ]; then
  echo "ci.sh: $libdir/libkiln.so.0 not found; build the C library first (ninja -C $1 kiln)" >&2
  exit 1
fi

python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null || ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "ci.sh: installing python3 and python3-venv" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
  python=python3
fi

venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
stamp="$venv/.kiln-installed"
want=$(cat "$here/pyproject.toml" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  "$venv/bin/python" -m pip install -q --disable-pip-version-check numpy pytest ruff ml_dtypes safetensors
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e "$here"
  echo "$want" >"$stamp"
fi

cd "$root"
echo "== ruff (lint, format)"
"$venv/bin/ruff" check --quiet --config bindings/python/pyproject.toml bindings/python samples/python
"$venv/bin/ruff" format --quiet --check --config bindings/python/pyproject.toml bindings/python samples/python

export KILN_LIBRARY_PATH="$libdir"
echo "== pytest"
"$venv/bin/python" -m pytest -q -p no:cacheprovider bindings/python/tests
echo "== sample"
"$venv/bin/python" samples/python/mlp/mlp.py
"$venv/bin/python" samples/python/zero_out/zero_out.py
# The picture samples, two small frames each (on vulkan, else cpu), into a scratch directory.
frames=$(mktemp -d)
trap 'rm -rf "$frames"' EXIT
"$venv/bin/python" samples/python/mandelbrot/mandelbrot.py --frames 2 --size 128x96 --output-dir "$frames/mandelbrot"
"$venv/bin/python" samples/python/ripples/ripples.py --frames 2 --size 128x96 --output-dir "$frames/ripples"
# The training sample exits 1 when the held-out accuracy misses 95%.
"$venv/bin/python" samples/python/train_digits/train_digits.py --output "$frames/train_digits_loss.png"
