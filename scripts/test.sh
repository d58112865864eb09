#!/usr/bin/env bash
# Installs, builds and runs every test (unit, CLI, golden scenarios) but the `slow` ones
# (ctest -L slow: the full re-fit of xpusim calibrate).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build -LE slow --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"
