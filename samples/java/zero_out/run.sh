#!/usr/bin/env bash
# Runs the Java ZeroOut sample (user-defined ops):  samples/java/zero_out/run.sh [BUILD_DIR]
# BUILD_DIR (relative to the repository root, default build/release) holds capi/libkiln.so;
# KILN_LIBRARY_PATH, when set, wins. Builds the binding jar (incrementally) first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
# shellcheck source=../../../bindings/java/jdk.sh
. "$root/bindings/java/jdk.sh"
kiln_use_jdk
export KILN_LIBRARY_PATH="${KILN_LIBRARY_PATH:-$root/${1:-build/release}/capi}"
jar="$root/bindings/java/target/kiln-0.2.0.jar"
mvn -q -B -Dstyle.color=never -f "$root/bindings/java/pom.xml" -DskipTests package
exec java --enable-native-access=ALL-UNNAMED -cp "$jar" "$root/samples/java/zero_out/ZeroOut.java"
