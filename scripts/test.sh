#!/usr/bin/env bash
# Installs, builds and runs every test (unit, CLI, golden scenarios, fuzz corpus replay) but the
# `slow` ones (ctest -L slow: the full re-fit of xpusim calibrate), in two build trees
# (docs/fuzzing.md, docs/performance.md "CI time"):
#   build/      gcc Release, as scripts/setup.sh builds it for users: the CLI and the Python
#               module, and the tests that need them (python, mpi, browser);
#   build-san/  clang-14 ASan+UBSan with the libFuzzer harnesses (scripts/sanitize.sh): every
#               other test under the sanitizers, then about 10 s of fuzzing per target.
# XS_FULL_RELEASE=1 also builds and runs the whole suite in build/ (as before the sanitizer tree).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
if [ "${XS_FULL_RELEASE:-0}" = 1 ]; then
  XS_EXTRA_PACKAGES="clang-14 libclang-rt-14-dev" scripts/setup.sh
  ctest --test-dir build -LE slow --output-on-failure -j"$JOBS"
else
  XS_EXTRA_PACKAGES="clang-14 libclang-rt-14-dev" XS_BUILD_TARGETS="xpusim xpusim_python" scripts/setup.sh
  ctest --test-dir build -L 'python|mpi|browser' --output-on-failure -j"$JOBS"
fi
scripts/sanitize.sh
