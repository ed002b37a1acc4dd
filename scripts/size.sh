#!/usr/bin/env bash
# The transfer size of the release build, raw and gzipped (gzip -9, what a static host typically
# serves), in two parts:
# - the first load, what every visit and every embed downloads: index.html (with the tools
#   loader), the viewer's wasm and JS glue, and the CSS. Budget: 265 KB (SIZE_BUDGET overrides).
#   A link or embed in compare mode loads the tools module at once as well.
# - the tools module, fetched only when a reader first uses a tool (compare, editor, explorer
#   search, export, playground): its wasm and JS glue. A ceiling (TOOLS_CEILING) catches growth.
# Fails when either is over. KB here means 1,000 bytes (KiB = 1,024 bytes is printed beside it).
# Usage: bash scripts/size.sh [dist-dir]    (run `trunk build --release --offline` first)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIST="${1:-dist}"
BUDGET="${SIZE_BUDGET:-265000}"
TOOLS_CEILING="${TOOLS_CEILING:-305000}"

shopt -s nullglob
viewer=()
tools=()
for f in "$DIST"/*.html "$DIST"/*.wasm "$DIST"/*.js "$DIST"/*.css; do
  case "$(basename "$f")" in
    fencelab-tools*) tools+=("$f") ;;
    *) viewer+=("$f") ;;
  esac
done
if [ "${#viewer[@]}" -eq 0 ] || [ "${#tools[@]}" -eq 0 ]; then
  echo "size: the viewer or the tools module is missing from $DIST/: run \`trunk build --release --offline\` first" >&2
  exit 2
fi

status=0
# Prints one part's table and checks it against its limit.
part() {
  local title="$1" limit="$2"
  shift 2
  local total_raw=0 total_gz=0
  printf '%s\n' "$title"
  printf '  %-8s %12s %12s\n' "kind" "raw bytes" "gzip bytes"
  for kind in html wasm js css; do
    local raw=0 gz=0 seen=0
    for f in "$@"; do
      [ "${f##*.}" = "$kind" ] || continue
      seen=1
      raw=$((raw + $(wc -c < "$f")))
      gz=$((gz + $(gzip -9c "$f" | wc -c)))
    done
    [ "$seen" -eq 1 ] || continue
    printf '  %-8s %12d %12d\n' "$kind" "$raw" "$gz"
    total_raw=$((total_raw + raw))
    total_gz=$((total_gz + gz))
  done
  printf '  %-8s %12d %12d\n' "total" "$total_raw" "$total_gz"
  awk -v gz="$total_gz" -v limit="$limit" 'BEGIN {
    printf "  %.1f KB (%.1f KiB) gzipped; limit %.0f KB\n", gz / 1000, gz / 1024, limit / 1000
  }'
  if [ "$total_gz" -gt "$limit" ]; then
    echo "size: $title is over its limit by $((total_gz - limit)) bytes" >&2
    status=1
  fi
}

part "first load (page, viewer, styles)" "$BUDGET" "${viewer[@]}"
part "tools module (fetched on first use of a tool)" "$TOOLS_CEILING" "${tools[@]}"
exit "$status"
