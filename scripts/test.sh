#!/usr/bin/env bash
# The whole check, as CI runs it: setup, format, lints, native tests, the wasm build, browser tests.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
if command -v npm >/dev/null 2>&1; then
  PATH="$(npm prefix -g)/bin:$PATH"
fi

section() { printf '\n==================== %s ====================\n' "$*"; }

section "setup"
bash scripts/setup.sh

section "cargo fmt --all --check"
cargo fmt --all --check

section "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

section "cargo test --workspace"
cargo test --workspace

section "cargo doc (broken doc links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p fencelab-core -p fencelab-sqlite

section "trunk build --release --offline"
trunk build --release --offline
for f in dist/*.wasm dist/*.js dist/*.css; do
  printf '%-48s %8d bytes, %7d gzipped\n' "$f" "$(wc -c < "$f")" "$(gzip -9c "$f" | wc -c)"
done

section "browser tests (node --test browser-tests/)"
(cd browser-tests && node --test --test-reporter=tap)

section "all checks passed"
