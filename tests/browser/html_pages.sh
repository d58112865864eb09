#!/usr/bin/env bash
# Browser test of the HTML reports (docs/html.md): writes the train, serve, validate, claims and
# sweep pages with the CLI (small, fast inputs), then loads all of them in ONE headless Chromium run
# through a harness page (iframes) that checks, after load, that each page has its expected
# charts (`svg.chart[data-chart=...]` with drawn content and a non-empty box), its summary and
# provenance tables, no script and no resource fetched (self-contained). Chromium's console
# (--enable-logging=stderr) must stay silent: any console message or uncaught error fails.
# --disable-dev-shm-usage: containers often give /dev/shm only 64 MiB, where Chromium can crash.
# Usage: html_pages.sh XPUSIM SOURCE_DIR. Exit 0 pass, 1 fail, 77 skipped (no Chromium).
set -euo pipefail
xpusim=$1
src=$2
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chromium" ]; then
  echo "SKIPPED: Chromium not installed (apt-get install chromium; scripts/setup.sh installs it)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The pages. A validation file of a few public rows (train and infer, several families), one with
# markup in its id to prove the escaping in a browser.
ids='^(tr-mpt-a100-7b-2k|tr-mbridge-b200-llama3-8b|tr-kor22-22b|in-trtllm05-ttft-llama-7b-h100-bs1-in2048|in-trn1-tnx-llama3-8b-128-8064-ttft|in-trtllm05-ttft-llama-70b-a100-tp4-bs1-in2048),'
{ head -1 "$src/data/validation/public.csv"; grep -E "$ids" "$src/data/validation/public.csv"; } > "$work/rows.csv"
sed -n 2p "$work/rows.csv" | sed 's/^[^,]*,/esc-<b>\&x<\/b>,/' >> "$work/rows.csv"
"$xpusim" train --system trn2-ultraserver --model llama3.1-8b --chips 64 --tp 4 --pp 4 --global-batch 64 \
  --seq-len 4096 --html "$work/train.html" > /dev/null
"$xpusim" serve --system trn2-ultraserver --model llama3.1-8b --chips 4 --rate 4 --requests 60 --in-len 512 \
  --out-len 64 --html "$work/serve.html" > /dev/null
"$xpusim" validate "$work/rows.csv" --html "$work/validate.html" > /dev/null
"$xpusim" claims --html "$work/claims.html" > /dev/null
"$xpusim" sweep "$src/data/sweeps/train-llama3.1-8b-h100.yaml" --html "$work/sweep.html" > /dev/null 2>&1

# Expected charts per page (a trailing * matches a prefix: one scatter per family).
cat > "$work/harness.html" <<'HTML'
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>harness</title></head><body>
<pre id="result">BROWSER-PENDING</pre>
<script>
const expected = {
  "train.html": ["step-timeline", "step-breakdown", "memory", "roofline"],
  "serve.html": ["ttft-cdf", "tpot-cdf", "e2e-cdf", "kv-utilisation", "batch", "throughput-vs-rate", "latency-vs-rate"],
  "validate.html": ["pred-vs-measured-*"],
  "claims.html": ["claims-ratios"],
  "sweep.html": ["pareto-front"],
};
const problems = [];
let pending = Object.keys(expected).length, charts = 0;
window.addEventListener("error", e => problems.push("harness: " + e.message));
function check(name, frame) {
  const doc = frame.contentDocument, win = frame.contentWindow;
  if (!doc || !doc.body) { problems.push(name + ": not loaded"); return; }
  for (const id of expected[name]) {
    const sel = id.endsWith("*") ? 'svg.chart[data-chart^="' + id.slice(0, -1) + '"]' : 'svg.chart[data-chart="' + id + '"]';
    const found = doc.querySelectorAll(sel);
    if (found.length === 0) { problems.push(name + ": no chart " + id); continue; }
    for (const svg of found) {
      const marks = svg.querySelectorAll("path.series, rect, circle, line.range").length;
      const box = svg.getBBox();
      if (marks === 0 || !(box.width > 0 && box.height > 0))
        problems.push(name + ": chart " + svg.getAttribute("data-chart") + " draws nothing");
      else charts++;
    }
  }
  for (const t of ["table.summary", "table.provenance"])
    if (!doc.querySelector(t)) problems.push(name + ": no " + t);
  if (doc.querySelector("script, link, img, iframe, [src]")) problems.push(name + ": not self-contained (script/link/src)");
  const fetched = win.performance.getEntriesByType("resource").length;
  if (fetched) problems.push(name + ": fetched " + fetched + " resources");
  if (doc.querySelector("b")) problems.push(name + ": user text became markup (<b>)");
}
function finish() {
  document.getElementById("result").textContent =
    problems.length ? "BROWSER-FAIL " + problems.join(" | ") : "BROWSER-PASS pages=" + Object.keys(expected).length + " charts=" + charts;
}
for (const name of Object.keys(expected)) {
  const frame = document.createElement("iframe");
  frame.onload = () => {
    try { check(name, frame); } catch (e) { problems.push(name + ": " + e); }
    if (--pending === 0) finish();
  };
  frame.src = name;
  document.body.appendChild(frame);
}
setTimeout(() => { if (pending) { problems.push(pending + " page(s) never loaded"); finish(); } }, 20000);
</script>
</body></html>
HTML

set +e
timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --disable-extensions \
  --allow-file-access-from-files --enable-logging=stderr --v=0 --virtual-time-budget=30000 \
  --user-data-dir="$work/profile" --dump-dom "file://$work/harness.html" > "$work/dom.html" 2> "$work/stderr.txt"
rc=$?
set -e
result=$(grep -o 'BROWSER-[A-Z]*[^<]*' "$work/dom.html" | head -1 || true)
console=$(grep -E ':CONSOLE|Uncaught' "$work/stderr.txt" || true)
echo "chromium exit $rc: ${result:-no result}"
if [ -n "$console" ]; then
  echo "console messages:"
  echo "$console"
  exit 1
fi
case "$result" in
  BROWSER-PASS*) exit 0 ;;
  *) echo "--- chromium stderr (tail, without D-Bus noise)"; grep -v dbus "$work/stderr.txt" | tail -20; exit 1 ;;
esac
