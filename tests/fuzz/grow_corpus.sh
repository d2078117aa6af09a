#!/usr/bin/env bash
# Grows the committed seed corpus of one fuzzer:
#   tests/fuzz/grow_corpus.sh NAME [SECONDS]     (default 600 s)
# runs build/fuzz/tests/fuzz/NAME_fuzz for SECONDS from corpus/NAME, then
# adds to corpus/NAME a small set of the inputs (found now, or by earlier
# ctest runs in build/fuzz/tests/fuzz/new_inputs/NAME) that together reach
# everything the corpus does not (libFuzzer -set_cover_merge=1). Build the
# fuzzers first:
#   cmake --preset fuzz && cmake --build --preset fuzz
set -euo pipefail
cd "$(dirname "$0")/../.."
name="${1:?usage: tests/fuzz/grow_corpus.sh NAME [SECONDS]}"
seconds="${2:-600}"
fuzzer="build/fuzz/tests/fuzz/${name}_fuzz"
corpus="tests/fuzz/corpus/$name"
earlier="build/fuzz/tests/fuzz/new_inputs/$name"
crashes="build/fuzz/tests/fuzz/crashes"
mkdir -p "$corpus" "$earlier" "$crashes"
grown="$(mktemp -d)"
trap 'rm -rf "$grown"' EXIT
options=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$crashes/$name-")
if [ -f "tests/fuzz/$name.dict" ]; then options+=(-dict="tests/fuzz/$name.dict"); fi
"$fuzzer" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 "$grown" "$corpus"
before="$(ls "$corpus" | wc -l)"
"$fuzzer" "${options[@]}" -set_cover_merge=1 "$corpus" "$grown" "$earlier"
echo "$corpus: $before inputs before, $(ls "$corpus" | wc -l) now, $(du -sh "$corpus" | cut -f1)"
