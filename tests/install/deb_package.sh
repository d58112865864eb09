#!/usr/bin/env bash
# tests/install/deb_package.sh BUILD_DIR: `cpack -G DEB` in the Release tree, `apt-get install` of
# the .deb on this machine, `xpusim demo` and a Python import from a temporary directory (neither
# the source tree nor XPUSIM_DATA_DIR in reach), then the package removed again. Needs root and
# apt-get: skipped (exit 77) elsewhere, except under CI, where that is a failure.
set -euo pipefail
build=$(cd "${1:?usage: deb_package.sh BUILD_DIR}" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  [ "${CI:-}" = true ] && fail "the .deb test needs root and apt-get under CI"
  echo "skipped: installing a .deb needs root and apt-get"
  exit 77
fi
tmp=$(mktemp -d)
remove() { DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq xpusim >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap remove EXIT
dpkg -s xpusim >/dev/null 2>&1 && remove && tmp=$(mktemp -d)

(cd "$build" && cpack -G DEB -B "$tmp" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/xpusim_*.deb)
echo "package: $(basename "$deb")"
dpkg-deb -f "$deb" Depends
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt-get install"; }

cd "$tmp"
unset XPUSIM_DATA_DIR PYTHONPATH
version=$(/usr/bin/xpusim --version)
echo "$version"
grep -qxF "data directory: /usr/share/xpusim (beside the binary)" <<<"$version" || fail "the packaged CLI does not read /usr/share/xpusim"
/usr/bin/xpusim demo >demo.txt || fail "demo from the package exited $?"
grep -q "Trn3" demo.txt || fail "the demo printed no Trn3 line"
echo "demo from the package: $(wc -l <demo.txt) lines"
if dpkg -L xpusim | grep -q '/usr/lib/python3/dist-packages/xpusim'; then
  /usr/bin/python3 -c 'import xpusim; d = xpusim.data_dir(); assert d["path"] == "/usr/share/xpusim", d; print("python:", xpusim.__file__, d)'
fi
echo "deb package: ok"
