#!/usr/bin/env bash
# The transfer size of the release build: everything a session can download (index.html, the
# wasm module, its JS glue and the CSS), raw, gzipped (gzip -9, what a static host typically
# serves) and brotli-compressed (quality 11; the `brotli` CLI if present, else node's zlib).
# Budget: 530 KB gzipped (SIZE_BUDGET overrides); fails when the build is over it.
# KB here means 1,000 bytes (KiB = 1,024 bytes is printed beside it).
# Usage: bash scripts/size.sh [dist-dir]    (run `trunk build --release --offline` first)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIST="${1:-dist}"
BUDGET="${SIZE_BUDGET:-530000}"

shopt -s nullglob
files=("$DIST"/*.html "$DIST"/*.wasm "$DIST"/*.js "$DIST"/*.css)
if [ "${#files[@]}" -eq 0 ] || ! compgen -G "$DIST/*.wasm" > /dev/null; then
  echo "size: no wasm module in $DIST/: run \`trunk build --release --offline\` first" >&2
  exit 2
fi

if command -v brotli > /dev/null 2>&1; then
  brotli_size() { brotli -q 11 -c "$1" | wc -c; }
else
  brotli_size() {
    node -e 'const z = require("node:zlib");
      const data = require("node:fs").readFileSync(process.argv[1]);
      const params = { [z.constants.BROTLI_PARAM_QUALITY]: 11, [z.constants.BROTLI_PARAM_SIZE_HINT]: data.length };
      console.log(z.brotliCompressSync(data, { params }).length);' "$1"
  }
fi

total_raw=0 total_gz=0 total_br=0
printf '%-8s %12s %12s %12s\n' "kind" "raw bytes" "gzip bytes" "brotli bytes"
for kind in html wasm js css; do
  raw=0 gz=0 br=0 seen=0
  for f in "${files[@]}"; do
    [ "${f##*.}" = "$kind" ] || continue
    seen=1
    raw=$((raw + $(wc -c < "$f")))
    gz=$((gz + $(gzip -9c "$f" | wc -c)))
    br=$((br + $(brotli_size "$f")))
  done
  [ "$seen" -eq 1 ] || continue
  printf '%-8s %12d %12d %12d\n' "$kind" "$raw" "$gz" "$br"
  total_raw=$((total_raw + raw))
  total_gz=$((total_gz + gz))
  total_br=$((total_br + br))
done
printf '%-8s %12d %12d %12d\n' "total" "$total_raw" "$total_gz" "$total_br"
awk -v gz="$total_gz" -v br="$total_br" -v limit="$BUDGET" 'BEGIN {
  printf "%.1f KB (%.1f KiB) gzipped, %.1f KB (%.1f KiB) brotli; budget %.0f KB gzipped\n",
    gz / 1000, gz / 1024, br / 1000, br / 1024, limit / 1000
}'
if [ "$total_gz" -gt "$BUDGET" ]; then
  echo "size: the page is over its budget by $((total_gz - BUDGET)) bytes gzipped" >&2
  exit 1
fi
