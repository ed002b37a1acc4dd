#!/usr/bin/env bash
# The transfer size of the release build: wasm, JS and CSS in dist/, raw and gzipped (gzip -9,
# what a static host typically serves). Fails when the gzipped total is over the budget.
# KB here means 1,000 bytes (KiB = 1,024 bytes is printed beside it).
# Usage: bash scripts/size.sh [dist-dir]    (run `trunk build --release --offline` first)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIST="${1:-dist}"
# bytes, gzipped: 250 KB. SIZE_BUDGET overrides it (scripts/test.sh uses that for its ceiling).
BUDGET="${SIZE_BUDGET:-250000}"

total_raw=0
total_gz=0
shopt -s nullglob
files=("$DIST"/*.wasm "$DIST"/*.js "$DIST"/*.css)
if [ "${#files[@]}" -eq 0 ]; then
  echo "size: no wasm, js or css in $DIST/: run \`trunk build --release --offline\` first" >&2
  exit 2
fi
printf '%-12s %12s %12s\n' "kind" "raw bytes" "gzip bytes"
for kind in wasm js css; do
  raw=0
  gz=0
  for f in "$DIST"/*."$kind"; do
    raw=$((raw + $(wc -c < "$f")))
    gz=$((gz + $(gzip -9c "$f" | wc -c)))
  done
  printf '%-12s %12d %12d\n' "$kind" "$raw" "$gz"
  total_raw=$((total_raw + raw))
  total_gz=$((total_gz + gz))
done
printf '%-12s %12d %12d\n' "total" "$total_raw" "$total_gz"
awk -v gz="$total_gz" -v budget="$BUDGET" 'BEGIN {
  printf "transfer size: %.1f KB (%.1f KiB) gzipped; budget %.0f KB\n", gz / 1000, gz / 1024, budget / 1000
}'
if [ "$total_gz" -gt "$BUDGET" ]; then
  echo "size: over budget by $((total_gz - BUDGET)) bytes" >&2
  exit 1
fi
