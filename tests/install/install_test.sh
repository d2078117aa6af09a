#!/usr/bin/env bash
# Installs a Kiln build under a temporary prefix, moves the installed tree
# elsewhere, and builds and runs a small C program against it with nothing
# but what pkg-config reports from the installed kiln.pc.
#   install_test.sh BUILD_DIR CC [EXTRA_CFLAGS...]
# EXTRA_CFLAGS are what programs linking this build's libkiln need (the
# sanitizer flags of a sanitizer build).
set -euo pipefail
build=$1
cc=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/installed" >/dev/null
# Nothing in the installed files may depend on where they were installed.
mv "$work/installed" "$work/moved"
prefix="$work/moved"

pc=$(find "$prefix" -name kiln.pc)
[ -n "$pc" ] || { echo "no kiln.pc under the install prefix" >&2; exit 1; }
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
cflags=$(pkg-config --cflags kiln)
libs=$(pkg-config --libs kiln)
libdir=$(pkg-config --variable=libdir kiln)
echo "pkg-config --cflags --libs kiln: $cflags $libs"
[ -f "$libdir/libkiln.so" ] || { echo "libdir '$libdir' has no libkiln.so" >&2; exit 1; }

cat >"$work/version.c" <<'C'
#include <stdio.h>
#include <string.h>

#include <kiln/kiln.h>

int main(void) {
  kiln_client_t* client = NULL;
  kiln_status_t* status = kiln_client_create(NULL, &client);
  if (status != NULL) {
    fprintf(stderr, "kiln_client_create: %s\n", kiln_status_message(status));
    kiln_status_destroy(status);
    return 1;
  }
  kiln_client_destroy(client);
  printf("kiln %s, header %d\n", kiln_version(), KILN_VERSION_NUMBER);
  return kiln_version_number() == KILN_VERSION_NUMBER ? 0 : 1;
}
C
# shellcheck disable=SC2086  # pkg-config output is a list of flags
"$cc" "$@" $cflags "$work/version.c" -o "$work/version" $libs
output=$(LD_LIBRARY_PATH="$libdir" "$work/version")
echo "$output"
expected="kiln $(pkg-config --modversion kiln),"
[[ $output == "$expected"* ]] || { echo "expected output starting '$expected'" >&2; exit 1; }
echo "install_test: an install moved from its prefix builds and runs through kiln.pc"
