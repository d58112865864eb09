#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages only), configures and builds xpusim.
# After it, the CLI is at build/xpusim.
set -euo pipefail
cd "$(dirname "$0")/.."

# Python module (pybind11, numpy, pandas), MPI sweeps (OpenMPI), HTML tests (chromium) and Chakra
# trace replay (protobuf) are part of the build and of the tests.
PACKAGES=(g++ cmake make libgtest-dev libbenchmark-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
          universal-ctags pybind11-dev python3-dev python3-numpy python3-pandas openmpi-bin libopenmpi-dev
          chromium libprotobuf-dev protobuf-compiler)
# scripts/test.sh adds the sanitizer tree's compiler (clang-14, libclang-rt-14-dev) here, so that
# one apt-get run installs everything.
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${XS_CMAKE_FLAGS:-} >/dev/null
cmake --build build -j"$JOBS" >/dev/null
echo "xpusim setup: built build/xpusim" >&2
