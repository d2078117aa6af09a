#!/usr/bin/env bash
# Fails when a C or C++ source of the project differs from what clang-format
# makes of it with the repository's .clang-format. Build trees and hidden
# folders (virtual environments such as benchmarks/.venv) are not sources.
# Usage: check_format.sh CLANG_FORMAT
set -euo pipefail
clang_format="$1"
cd "$(dirname "$0")/../.."
mapfile -t files < <(find backends benchmarks capi core samples tests tools \
  \( -path '*/build' -o -path '*/.*' -o -path '*/target' \) -prune -o -type f \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -print | sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "check_format: no sources found" >&2
  exit 1
fi
"$clang_format" --dry-run -Werror "${files[@]}"
echo "check_format: ${#files[@]} files follow .clang-format"
