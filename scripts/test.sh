#!/usr/bin/env bash
# Installs, builds and runs every test (unit, CLI, golden scenarios).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"
