#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages only), configures and builds the CLI (build/xpusim)
# and the Python module (build/python/). The tests, the benchmarks and the packages only they need
# (GoogleTest, clang, Chromium, Open MPI, pandas) are scripts/test.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
# The CLI: the compiler, CMake, the libraries it links (protobuf: Chakra trace replay).
PACKAGES=(g++ cmake make nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libprotobuf-dev protobuf-compiler)
# The Python module.
PACKAGES+=(pybind11-dev python3-dev)
# scripts/test.sh adds the test packages here, so that one apt-get run installs everything
# before the one configure step.
PACKAGES+=(${XS_EXTRA_PACKAGES:-})
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "xpusim setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

JOBS=$(nproc 2>/dev/null || echo 2)
# A unity build: CMake batches each target's sources into a few compiler runs (docs/performance.md,
# "Build time").
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON ${XS_CMAKE_FLAGS:-} >build/configure.log
# Optional features that are off say so, with the packages that turn them on.
grep -E '^-- xpusim: .*not found' build/configure.log | sed 's/^-- /note: /' >&2 || true
cmake --build build -j"$JOBS" --target xpusim_apps >/dev/null
echo "xpusim setup: built build/xpusim$([ -d build/python ] && echo ' and build/python')" >&2
