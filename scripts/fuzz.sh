#!/usr/bin/env bash
# scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]: fuzzes each libFuzzer target of BUILD_DIR (built
# with -DXS_FUZZ=ON) for SECONDS, from its corpus and regression inputs (tests/fuzz), nproc targets
# at a time. The checked-in inputs are only read: what the fuzzer adds goes to
# BUILD_DIR/fuzz/work/<target>/. A crash, leak, UB report or an input over the time or memory
# limit stops that target and fails the script; the input is left in
# BUILD_DIR/fuzz/artifacts/<target>/ and the log in BUILD_DIR/fuzz/<target>.log (docs/fuzzing.md:
# turn it into a regression input).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
# Absolute paths: libFuzzer's fork mode (the flags target) does not find relative directories.
build=$(cd "$build" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for exe in "$build"/fuzz/fuzz_*; do targets+=("$(basename "$exe" | sed 's/^fuzz_//')"); done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

fuzz_one() {  # fuzz_one TARGET: runs it, prints one summary line, returns its status
  local t=$1 dir="$build/fuzz"
  local inputs=("$PWD/tests/fuzz/corpus/$t")
  [ -d "tests/fuzz/regressions/$t" ] && inputs+=("$PWD/tests/fuzz/regressions/$t")
  mkdir -p "$dir/work/$t" "$dir/artifacts/$t"
  # The flag-to-scenario target can ask for a legitimately long simulation (10^9 requests): its
  # slow or big inputs are skipped (fork mode), crashes, UB and non-InputError exceptions still fail.
  # Memory: libFuzzer's own out-of-memory report walks every heap chunk under ASan (quadratic in
  # the chunks: it once outlasted CI's whole budget, and writes the input only after), so the
  # other targets stop at ASan's RSS limit instead, which writes the input at once.
  local extra=(-rss_limit_mb=0 -malloc_limit_mb=2048) asan="$ASAN_OPTIONS:hard_rss_limit_mb=2048"
  [ "$t" = flags ] && extra=(-rss_limit_mb=2048 -fork=1 -ignore_timeouts=1 -ignore_ooms=1) asan="$ASAN_OPTIONS"
  # A hard stop well past the run: a target that does not end is killed and fails with its log.
  local rc=0
  ASAN_OPTIONS="$asan" timeout -s KILL $((seconds + 120)) "$dir/fuzz_$t" -max_total_time="$seconds" -timeout=60 -close_fd_mask=3 -print_final_stats=1 \
      "${extra[@]}" -artifact_prefix="$dir/artifacts/$t/" "$dir/work/$t" "${inputs[@]}" >"$dir/$t.log" 2>&1 || rc=$?
  local runs
  runs=$(grep -oE '^#[0-9]+' "$dir/$t.log" | tail -1 | tr -d '#')
  echo "fuzz $t: ${runs:-?} executions in ${seconds} s, exit $rc$([ $rc -eq 137 ] && echo ' (killed: no end within the hard stop)')"
  [ $rc -eq 0 ] || tail -40 "$dir/$t.log"
  return $rc
}
export -f fuzz_one
export build seconds
printf '%s\n' "${targets[@]}" | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} bash -c 'fuzz_one {}'
