#!/usr/bin/env bash
# Readable code (issue 8): at most two functions in src/ and apps/ may exceed 100 lines, as
# Universal Ctags measures them (end line - start line + 1 of every function definition).
# Usage: function_length.sh SOURCE_DIR. Exit 0 pass, 1 fail, 77 skipped (no Universal Ctags).
set -euo pipefail
cd "$1"
if ! command -v ctags >/dev/null 2>&1 || ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "SKIPPED: Universal Ctags not installed (apt-get install universal-ctags; scripts/setup.sh installs it)"
  exit 77
fi
readonly limit_lines=100 allowed=2
long=$(ctags -R --fields=+ne --c++-kinds=f -f - src apps |
  awk -F'\t' '{l="";e="";for(i=4;i<=NF;i++){if($i~/^line:/)l=substr($i,6);if($i~/^end:/)e=substr($i,5)} if(e!="")print e-l+1,$2,$1}' |
  sort -rn | awk -v limit="$limit_lines" '$1 > limit')
n=$(printf '%s\n' "$long" | awk 'NF' | wc -l)
echo "functions over $limit_lines lines (lines file function):"
printf '%s\n' "$long" | awk 'NF{print "  " $0}'
echo "counted: $n, allowed: $allowed"
[ "$n" -le "$allowed" ]
