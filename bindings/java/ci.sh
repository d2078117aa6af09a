#!/usr/bin/env bash
# Builds, lints (javac -Xlint:all -Xdoclint, warnings are errors) and tests the Java binding,
# then runs the Java sample, against a libkiln that CMake already built.
#
#   bindings/java/ci.sh BUILD_DIR      # BUILD_DIR relative to the repository root,
#                                      # holding capi/libkiln.so (e.g. build/release)
#
# Installs Maven with apt-get when missing; needs a JDK >= 22 (see jdk.sh).
# KILN_JAVA_ITERATIONS / KILN_JAVA_COMPILE_ITERATIONS override the lifecycle test's counts.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: bindings/java/ci.sh BUILD_DIR   (e.g. build/release)" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lib_dir="$root/$1/capi"
if [ ! -e "$lib_dir/libkiln.so" ]; then
  echo "kiln: no $1/capi/libkiln.so; build it first: cmake --build $1 --target kiln" >&2
  exit 1
fi

# shellcheck source=jdk.sh
. "$root/bindings/java/jdk.sh"
kiln_use_jdk
if ! command -v mvn >/dev/null 2>&1; then
  echo "kiln: installing maven" >&2
  apt-get install -y -qq maven >/dev/null
fi
echo "kiln java: JDK $(kiln_jdk_major "$JAVA_HOME") at $JAVA_HOME, library $1/capi"

export KILN_LIBRARY_PATH="$lib_dir"
# CudaMemoryTest runs on Kiln's fake CUDA driver built in BUILD_DIR (tests/cuda/fake_driver);
# it fails, saying so, when that is not built.
mvn -q -B -Dstyle.color=never -f "$root/bindings/java/pom.xml" \
  -Dkiln.test.iterations="${KILN_JAVA_ITERATIONS:-100000}" \
  -Dkiln.test.compileIterations="${KILN_JAVA_COMPILE_ITERATIONS:-100000}" \
  -Dkiln.fakeCudaDriver="$root/$1/tests/cuda/libkiln_fake_cuda_driver.so" \
  package
# The sample's output is what a user sees: no terminal escapes in it.
sample_output=$("$root/samples/java/mlp/run.sh" "$1" 2>&1) || {
  printf '%s\n' "$sample_output"
  exit 1
}
printf '%s\n' "$sample_output"
if [[ $sample_output == *$'\e'* ]]; then
  echo "kiln java: the sample printed terminal escape sequences" >&2
  exit 1
fi
"$root/samples/java/zero_out/run.sh" "$1"
# The training sample exits 1 when the held-out accuracy misses 95%.
curve=$(mktemp -d)
"$root/samples/java/train_digits/run.sh" "$1" --output "$curve/train_digits_loss.png"
rm -rf "$curve"
echo "kiln java: OK"
