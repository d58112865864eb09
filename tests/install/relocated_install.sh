#!/usr/bin/env bash
# tests/install/relocated_install.sh BUILD_DIR PYTHON_MODULE(ON|OFF): `cmake --install` into a
# temporary prefix, the prefix moved elsewhere, then the CLI's demo and a Python import run from
# the moved prefix, from another working directory, with XPUSIM_DATA_DIR unset: both must read the
# moved prefix's share/xpusim (docs/install.md), never the source tree's data/.
set -euo pipefail
build=$(cd "${1:?usage: relocated_install.sh BUILD_DIR ON|OFF}" && pwd)
python_module=${2:-OFF}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/first" >/dev/null
mv "$tmp/first" "$tmp/moved"
prefix=$(cd "$tmp/moved" && pwd -P)
cd "$tmp"
unset XPUSIM_DATA_DIR

version=$("$prefix/bin/xpusim" --version)
echo "$version"
grep -qxF "data directory: $prefix/share/xpusim (beside the binary)" <<<"$version" ||
  fail "the moved CLI does not read its own prefix's data"
"$prefix/bin/xpusim" demo >demo.txt || fail "demo from the moved prefix exited $?"
grep -q "Trn3" demo.txt || fail "the demo printed no Trn3 line"
echo "demo from the moved prefix: $(wc -l <demo.txt) lines"
# --data-dir wins over everything; a directory without a catalog is bad input (exit 2).
set +e
"$prefix/bin/xpusim" --data-dir "$tmp" --version >/dev/null 2>err.txt
rc=$?
set -e
[ $rc -eq 2 ] || fail "--data-dir without a catalog exited $rc, expected 2"
grep -q "error: --data-dir: not an xpusim data directory" err.txt || fail "unclear --data-dir message: $(cat err.txt)"

if [ "$python_module" = ON ]; then
  PYTHONPATH="$prefix/lib/python3/dist-packages" /usr/bin/python3 - "$prefix" <<'PY'
import sys, xpusim
prefix = sys.argv[1]
assert xpusim.__file__.startswith(prefix + "/lib/python3/dist-packages/"), xpusim.__file__
d = xpusim.data_dir()
assert d == {"path": prefix + "/share/xpusim", "origin": "beside the binary"}, d
doc = xpusim.catalog(id="trn3-ultraserver-gen2")
assert doc["catalog_digest"], doc
print("python from the moved prefix:", d["path"], doc["command"])
PY
fi
echo "relocated install: ok"
