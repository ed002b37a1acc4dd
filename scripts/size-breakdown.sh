#!/usr/bin/env bash
# Where the release wasm's bytes go, grouped by crate and core module, for size work.
# Builds the web crate for wasm32 (the page's `web` profile), keeps function names through
# wasm-bindgen and wasm-opt, and groups `twiggy top` by the first matching module path. The gzipped size of
# the same build without names is printed first: that is what scripts/size.sh counts.
# Needs twiggy (`cargo install twiggy`); not part of the test run.
# Usage: bash scripts/size-breakdown.sh [rows]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROWS="${1:-30}"
command -v twiggy > /dev/null || { echo "size-breakdown: install twiggy first (cargo install twiggy)" >&2; exit 2; }
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-reference-types --enable-multivalue)

BIN=fencelab-web
cargo build -q --profile web --target wasm32-unknown-unknown -p fencelab-web --bin "$BIN"
WASM="${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/web/$BIN.wasm"
wasm-bindgen --target web --no-typescript --keep-debug --out-dir "$OUT" "$WASM"
wasm-opt -Oz "${FEATURES[@]}" --reorder-functions-by-name --strip-debug --strip-producers --strip-target-features "$OUT/${BIN}_bg.wasm" -o "$OUT/plain.wasm"
wasm-opt -Oz -g "${FEATURES[@]}" "$OUT/${BIN}_bg.wasm" -o "$OUT/named.wasm"
echo "wasm after wasm-opt -Oz: $(wc -c < "$OUT/plain.wasm") bytes, $(gzip -9c "$OUT/plain.wasm" | wc -c) gzipped"
twiggy top -n 1000000 -f csv "$OUT/named.wasm" > "$OUT/top.csv"

python3 - "$OUT/top.csv" "$ROWS" <<'PY'
import collections, csv, re, sys

# The first pattern that matches a function's name decides its group; monomorphized generic code
# is often named after the library (btree, sort, fmt) rather than the caller, and "yew" includes
# the page's component bodies, which are inlined into Yew's generic `view`.
GROUPS = [
    r"fencelab_core::scenario::[a-z_]+", r"fencelab_core::[a-z_]+", r"fencelab_web::[a-z_]+",
    r"serde_json", r"yew", r"js_sys|web_sys|wasm_bindgen", r"serde", r"litemap",
    r"alloc::collections::btree", r"slice::sort", r"hashbrown", r"dlmalloc", r"flt2dec|fmt::",
    r"drop_in_place", r"Clone>::clone", r"PartialEq>::eq",
]
groups = collections.Counter()
for row in csv.DictReader(open(sys.argv[1])):
    name, size = row["Name"], int(row["ShallowSize"])
    if "custom section" in name or "function names" in name:
        continue
    key = "data" if name.startswith("data segment") else "other"
    for pattern in GROUPS:
        found = re.search(pattern, name)
        if found:
            key = found.group(0)
            break
    groups[key] += size
total = sum(groups.values())
print(f"{'bytes':>9}  {'share':>6}  group (code and data before gzip, {total} bytes in all)")
for key, size in groups.most_common(int(sys.argv[2])):
    print(f"{size:9d}  {100 * size / total:5.1f}%  {key}")
PY
