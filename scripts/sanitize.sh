#!/usr/bin/env bash
# The sanitizer tree (docs/fuzzing.md): clang-14 with AddressSanitizer + UndefinedBehaviorSanitizer
# and the libFuzzer harnesses (-DXS_FUZZ=ON) in build-san/. Needs clang-14 and libclang-rt-14-dev
# (scripts/test.sh installs them); links with lld-14 where it is installed. Two scopes:
#   XS_SAN_SCOPE=all (default): builds everything (a unity build without the benchmarks and the
#     slow re-fit test); runs every test but the slow ones under the sanitizers (the MPI one with
#     leak checks off for Open MPI's own leaks, tests/mpi/sweep_two_ranks.sh), the Python module's tests (the system python with the ASan runtime
#     preloaded) and the fuzz corpus and regression replay among them; then fuzzes every target
#     (docs/fuzzing.md; about 24 min on 2 cores, docs/performance.md "CI time").
#   XS_SAN_SCOPE=readers (CI, docs/performance.md "CI time"): builds only the fuzz targets of the
#     readers below the simulation layers (config, hf_config, npy, safetensors, unit_parse), replays
#     their inputs and fuzzes them.
# XS_SAN_FULL=0 leaves ASan off the simulation layers (UBSan stays; -DXS_SAN_FULL=OFF): the suite
# runs in about half the time. Each target fuzzes for XS_FUZZ_SECONDS (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
READERS=(config hf_config npy safetensors unit_parse)
linker=()
if command -v ld.lld-14 >/dev/null; then
  linker=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld-14 -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld-14
          -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld-14)
fi
full=ON
[ "${XS_SAN_FULL:-1}" = 0 ] && full=OFF
cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 -DXS_FUZZ=ON \
      -DXS_SAN_FULL=$full "${linker[@]}" \
      ${XS_SAN_CMAKE_FLAGS:--DCMAKE_UNITY_BUILD=ON -DXS_BUILD_BENCH=OFF -DXS_BUILD_SLOW_TESTS=OFF} >/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ "${XS_SAN_SCOPE:-all}" = readers ]; then
  cmake --build build-san -j"$JOBS" --target "${READERS[@]/#/fuzz_}" >/dev/null
  echo "xpusim sanitize: built the reader fuzz targets in build-san (ASan+UBSan)" >&2
  ctest --test-dir build-san -R "^fuzz\.($(IFS='|'; echo "${READERS[*]}"))\.replay$" --output-on-failure -j"$JOBS"
  scripts/fuzz.sh build-san "${XS_FUZZ_SECONDS:-10}" "${READERS[@]}"
else
  cmake --build build-san -j"$JOBS" >/dev/null
  echo "xpusim sanitize: built build-san (ASan+UBSan, fuzz targets; XS_SAN_FULL=$full)" >&2
  ctest --test-dir build-san -LE 'slow' --output-on-failure -j"$JOBS"
  scripts/fuzz.sh build-san "${XS_FUZZ_SECONDS:-10}"
fi
