#!/usr/bin/env bash
# The sanitizer tree (docs/fuzzing.md): clang-14 with AddressSanitizer + UndefinedBehaviorSanitizer
# and the libFuzzer harnesses (-DXS_FUZZ=ON) in build-san/. Runs every test but the slow ones and
# those that need the Release tree (python: the module loaded by the system python; mpi; browser)
# under the sanitizers, the fuzz corpus and regression replay among them, then fuzzes each target
# for XS_FUZZ_SECONDS (default 10). Needs clang-14 and libclang-rt-14-dev (scripts/test.sh
# installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 -DXS_FUZZ=ON \
      ${XS_SAN_CMAKE_FLAGS:-} >/dev/null
cmake --build build-san -j"$JOBS" >/dev/null
echo "xpusim sanitize: built build-san (ASan+UBSan, fuzz targets)" >&2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir build-san -LE 'slow|python|mpi|browser' --output-on-failure -j"$JOBS"
scripts/fuzz.sh build-san "${XS_FUZZ_SECONDS:-10}"
