#!/usr/bin/env bash
# Builds, lints and tests the Go binding and its sample against a built libkiln.
#
#   bindings/go/ci.sh BUILD_DIR      (relative to the repository root, e.g. build/release)
#
# BUILD_DIR is a CMake build directory in which the `kiln` target is built
# (BUILD_DIR/capi/libkiln.so). The binding finds the library with pkg-config;
# CMake writes BUILD_DIR/pkgconfig/kiln.pc for the build tree (headers from the
# source tree, the library from BUILD_DIR with an rpath), so
#
#   PKG_CONFIG_PATH=$PWD/BUILD_DIR/pkgconfig go -C samples/go/mlp run .
#
# runs the sample without this script. With an installed libkiln (kiln.pc on
# the default pkg-config path) no variable is needed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: bindings/go/ci.sh BUILD_DIR" >&2; exit 2; }
case $1 in /*) build=$1 ;; *) build=$root/$1 ;; esac
libdir=$build/capi
[ -e "$libdir/libkiln.so" ] || { echo "ci.sh: $libdir/libkiln.so missing; build the kiln target first" >&2; exit 1; }

# --- toolchain: a C compiler, pkg-config, and Go >= 1.24 -------------------------
apt_install() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq "$@" >/dev/null
}
missing=()
command -v cc >/dev/null || missing+=(gcc)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || missing+=(golang-go)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
command -v go >/dev/null || export PATH=/usr/local/go/bin:$PATH
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if [ "$go_minor" -lt 21 ]; then
  # Too old to switch toolchains itself: fetch Go 1.24 with the golang.org/dl wrapper.
  go install golang.org/dl/go1.24.13@latest
  "$(go env GOPATH)/bin/go1.24.13" download >/dev/null
  export PATH=$("$(go env GOPATH)/bin/go1.24.13" env GOROOT)/bin:$PATH
fi
# Go 1.21..1.23 download the toolchain go.mod asks for.
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}

# --- pkg-config file for the build tree (written by CMake) -----------------------
pcdir=$build/pkgconfig
[ -e "$pcdir/kiln.pc" ] || { echo "ci.sh: $pcdir/kiln.pc missing; configure the build with CMake" >&2; exit 1; }
export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# The go build cache does not hash pkg-config's output, so a package built
# against another libkiln would be reused; a define naming this .pc file's
# contents is hashed (CGO_CPPFLAGS is) and keeps one cache entry per library.
pc_id=$(cksum <"$pcdir/kiln.pc" | cut -d' ' -f1)
export CGO_CPPFLAGS="${CGO_CPPFLAGS:+$CGO_CPPFLAGS }-DKILN_GO_PC_ID=$pc_id"

# --- lint, test, sample ----------------------------------------------------------------
step() { printf '== %s\n' "$*"; }
for dir in bindings/go samples/go/mlp samples/go/zero_out samples/go/train_digits; do
  cd "$root/$dir"
  step "gofmt $dir"
  unformatted=$(gofmt -l .)
  [ -z "$unformatted" ] || { echo "not gofmt-ed: $unformatted" >&2; exit 1; }
  step "go vet $dir"
  go vet ./...
done
cd "$root/bindings/go"
# The tests of raw CUDA memory and kDLCUDA run on Kiln's fake CUDA driver
# (tests/cuda/fake_driver) built in BUILD_DIR; they fail, saying so, when it is
# not built.
export KILN_FAKE_CUDA_DRIVER=$build/tests/cuda/libkiln_fake_cuda_driver.so
step "go test (100k create/destroy loops)"
go test -count=1 -v ./...
step "go test -race -short"
go test -race -short -count=1 ./...
step "sample samples/go/mlp"
go -C "$root/samples/go/mlp" run .
step "sample samples/go/zero_out"
go -C "$root/samples/go/zero_out" run .
step "sample samples/go/train_digits (exits 1 under 95% held-out accuracy)"
curve=$(mktemp -d)
go -C "$root/samples/go/train_digits" run . -output "$curve/train_digits_loss.png" | tee "$curve/cpu.txt"
# The same training on vulkan (Mesa's lavapipe where there is no GPU; CI
# installs it with .ci/install-deps) must end with the same accuracy line.
step "sample samples/go/train_digits -backend vulkan (the same accuracy as on cpu)"
go -C "$root/samples/go/train_digits" run . -backend vulkan -output "$curve/train_digits_loss_vulkan.png" |
  tee "$curve/vulkan.txt"
accuracy_line() { grep -o 'held-out accuracy [0-9.]*% after [0-9]* epochs ([0-9]* steps)' "$1"; }
cpu_line=$(accuracy_line "$curve/cpu.txt")
vulkan_line=$(accuracy_line "$curve/vulkan.txt")
if [ -z "$cpu_line" ] || [ "$cpu_line" != "$vulkan_line" ]; then
  echo "train_digits: vulkan ended with '$vulkan_line', cpu with '$cpu_line'" >&2
  exit 1
fi
rm -rf "$curve"
step "ok"
