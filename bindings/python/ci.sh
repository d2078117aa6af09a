#!/usr/bin/env bash
# Lints and tests the Python binding, and runs its sample, against a built libkiln.
#   bindings/python/ci.sh BUILD_DIR      (BUILD_DIR relative to the repo root, e.g. build/release)
# Creates bindings/python/.venv on first use (numpy, pytest, ruff, ml_dtypes,
# safetensors (interop tests) and this package, editable); later runs reuse it.
# The DLPack tests with PyTorch run again in bindings/python/.venv-torch, a
# venv over Debian's python3 that sees its packages: python3-torch (which
# .ci/install-deps installs) and the python3-numpy it was built for (torch
# 1.13 cannot run beside the NumPy 2 of the first venv, whose newer DLPack the
# other tests need). Where Debian's python3 has no torch they are skipped,
# saying so; under CI (CI set) that fails instead.
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
# -rs lists each skipped test with its reason.
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider bindings/python/tests

echo "== pytest: DLPack with PyTorch (Debian's python3-torch and python3-numpy)"
system_python=/usr/bin/python3
if [ -x "$system_python" ] && "$system_python" -c 'import torch' 2>/dev/null; then
  torch_venv="$here/.venv-torch"
  if [ ! -x "$torch_venv/bin/pytest" ]; then
    "$system_python" -m venv --system-site-packages "$torch_venv"
    "$torch_venv/bin/python" -m pip install -q --disable-pip-version-check pytest
  fi
  "$torch_venv/bin/python" -c 'import numpy, torch; print(f"torch {torch.__version__}, NumPy {numpy.__version__}")'
  PYTHONPATH="$root/bindings/python/src" "$torch_venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
    bindings/python/tests/test_dlpack.py -k torch
elif [ -n "${CI:-}" ]; then
  echo "ci.sh: Debian's python3 has no torch: install python3-torch (.ci/install-deps does)" >&2
  exit 1
else
  echo "skipped: Debian's python3 has no torch (install python3-torch to run these)"
fi
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
