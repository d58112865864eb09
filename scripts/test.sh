#!/usr/bin/env bash
# The README's test command (and CI's, .ci/run). Installs every package once, then:
#   1. the Release tree build/ (scripts/setup.sh: the CLI and the Python module users get) and
#      the tests whose outcome can differ under optimisation (label optimised: goldens, accuracy
#      ratchets, determinism), plus the installation tests (label install: a moved `cmake
#      --install` prefix, and the .deb through apt-get);
#   2. the sanitizer tree build-san/ (clang-14, ASan+UBSan on every layer, libFuzzer;
#      scripts/sanitize.sh): the whole suite but the slow re-fit (ctest -L slow), the Python,
#      MPI, browser and Chakra tests among it, then every fuzz target replayed and fuzzed.
# Each phase prints its wall time (docs/performance.md, "CI").
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
phase_start=$SECONDS
phase() {  # phase NAME: closes the previous phase's clock and opens NAME's
  local now=$SECONDS
  [ -n "${phase_name:-}" ] && echo "xpusim test: phase '$phase_name' took $((now - phase_start)) s" >&2
  phase_name=$1
  phase_start=$now
  [ -n "$phase_name" ] && echo "xpusim test: phase '$phase_name'" >&2
  return 0
}

# The tests' own packages: GoogleTest, the sanitizer tree's compiler and linker, Chromium (the HTML
# pages), Open MPI (sweeps over ranks), numpy and pandas (the Python module's frames), ctags (the
# readability check), dpkg-dev and file (dpkg-shlibdeps and CPack's ELF detection for the .deb).
TEST_PACKAGES="libgtest-dev clang-14 libclang-rt-14-dev lld-14 chromium openmpi-bin libopenmpi-dev
               python3-numpy python3-pandas universal-ctags dpkg-dev file"
phase "packages and the Release build (build/)"
XS_EXTRA_PACKAGES="$TEST_PACKAGES" scripts/setup.sh
phase "Release: the optimised and install tests' build"
cmake --build build -j"$JOBS" --target optimised_tests >/dev/null
phase "Release: optimised and install tests"
ctest --test-dir build -L 'optimised|install' --output-on-failure -j"$JOBS"
phase "sanitizer tree build (build-san/)"
scripts/sanitize.sh build
phase "sanitizer tree: the whole suite"
scripts/sanitize.sh test
phase "sanitizer tree: every fuzz target"
scripts/sanitize.sh fuzz
phase ""
echo "xpusim test: all phases passed in $((SECONDS - start)) s" >&2
