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

section "cargo clippy -p fencelab-web --features test-hooks (the benchmark's hooks)"
cargo clippy -p fencelab-web --features test-hooks --all-targets -- -D warnings

section "cargo test --workspace"
cargo test --workspace

section "cargo doc (broken doc links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p fencelab-core -p fencelab-sqlite -p fencelab-postgres -p fencelab-etcd -p fencelab-kit -p fencelab-interop

section "trunk build --release --offline"
trunk build --release --offline

section "the example book (scripts/book.sh: mdbook with mdbook-fencelab)"
bash scripts/book.sh dist-book

section "release transfer size (scripts/size.sh)"
# The page must stay within its budget (530 KB gzipped); an overrun fails the run after the
# browser tests have run too.
size_ok=1
bash scripts/size.sh || size_ok=0

section "browser tests (node --test browser-tests/)"
(cd browser-tests && node --test --test-reporter=tap)

if [ "$size_ok" -ne 1 ]; then
  section "FAILED: the release bundle is over its size budget (see above)"
  exit 1
fi

section "all checks passed"
