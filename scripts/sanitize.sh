#!/usr/bin/env bash
# scripts/sanitize.sh [build|test|fuzz|all]: the sanitizer tree (docs/fuzzing.md), clang-14 with
# AddressSanitizer + UndefinedBehaviorSanitizer on every layer and the libFuzzer harnesses
# (-DXS_FUZZ=ON) in build-san/, a unity build without the benchmarks and the slow re-fit test.
# Needs clang-14 and libclang-rt-14-dev (scripts/test.sh installs them); links with lld-14 where
# it is installed.
#   build: configures and builds everything;
#   test:  runs every test but the slow re-fit and the installation tests (the Release tree's),
#          the Python module's with the ASan runtime preloaded, the MPI one with leak checks off
#          for Open MPI's own leaks (tests/mpi/sweep_two_ranks.sh), the fuzz corpus replays;
#   fuzz:  fuzzes every target for XS_FUZZ_SECONDS (default 10; scripts/fuzz.sh);
#   all (default): the three in turn.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
step=${1:-all}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ "$step" = build ] || [ "$step" = all ]; then
  linker=()
  if command -v ld.lld-14 >/dev/null; then
    linker=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld-14 -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld-14
            -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld-14)
  fi
  cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 -DXS_FUZZ=ON "${linker[@]}" \
        ${XS_SAN_CMAKE_FLAGS:--DCMAKE_UNITY_BUILD=ON -DXS_BUILD_BENCH=OFF -DXS_BUILD_SLOW_TESTS=OFF} >/dev/null
  cmake --build build-san -j"$JOBS" >/dev/null
  echo "xpusim sanitize: built build-san (ASan+UBSan, fuzz targets)" >&2
fi
if [ "$step" = test ] || [ "$step" = all ]; then
  ctest --test-dir build-san -LE 'slow|install' --output-on-failure -j"$JOBS"
fi
if [ "$step" = fuzz ] || [ "$step" = all ]; then
  scripts/fuzz.sh build-san "${XS_FUZZ_SECONDS:-10}"
fi
