#!/usr/bin/env bash
# Installs, builds and runs every test (unit, CLI, golden scenarios) but the `slow` ones
# (ctest -L slow: the full re-fit of xpusim calibrate) in the gcc Release tree build/, then the
# sanitizer tree build-san/ (clang-14, ASan+UBSan, libFuzzer; scripts/sanitize.sh, docs/fuzzing.md).
# Within CI's 15 minutes on 2 cores the sanitizer tree builds and fuzzes the readers below the
# simulation layers (XS_SAN_SCOPE=readers, docs/performance.md "CI time"); XS_SAN_SCOPE=all also
# runs the whole suite and every fuzz target under the sanitizers (about 10 more minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
# The test tree skips the benchmarks, compiles at -O2 and as a unity build (batches of sources
# per compiler run: CI time, docs/performance.md "CI time").
XS_CMAKE_FLAGS="${XS_CMAKE_FLAGS:--DXS_BUILD_BENCH=OFF -DXS_OPT_LEVEL=-O2 -DCMAKE_UNITY_BUILD=ON}" \
  XS_EXTRA_PACKAGES="clang-14 libclang-rt-14-dev" scripts/setup.sh
ctest --test-dir build -LE slow --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"
XS_SAN_SCOPE=${XS_SAN_SCOPE:-readers} scripts/sanitize.sh
