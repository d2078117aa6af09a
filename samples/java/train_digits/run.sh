#!/usr/bin/env bash
# Runs the Java training sample:  samples/java/train_digits/run.sh [BUILD_DIR] [-- SAMPLE OPTIONS]
# BUILD_DIR (relative to the repository root, default build/release) holds capi/libkiln.so;
# KILN_LIBRARY_PATH, when set, wins. Builds the binding jar (incrementally) first. Options
# after the build directory go to the sample (--optimizer adam|sgd, --epochs N, --output FILE).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
# shellcheck source=../../../bindings/java/jdk.sh
. "$root/bindings/java/jdk.sh"
kiln_use_jdk
build="build/release"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  build=$1
  shift
fi
export KILN_LIBRARY_PATH="${KILN_LIBRARY_PATH:-$root/$build/capi}"
jar="$root/bindings/java/target/kiln-0.2.0.jar"
mvn -q -B -Dstyle.color=never -f "$root/bindings/java/pom.xml" -DskipTests package
exec java --enable-native-access=ALL-UNNAMED -Dkiln.samples.data="$root/samples/data" -cp "$jar" \
  "$root/samples/java/train_digits/TrainDigits.java" "$@"
