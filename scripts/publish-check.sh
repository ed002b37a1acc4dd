#!/usr/bin/env bash
# Checks that every crate meant for crates.io publishes: `cargo publish --dry-run` packages each
# one (crates with `publish = false` are skipped), builds it from its package against the other
# packages, as crates.io would, and uploads nothing. It needs the crates.io index, not GitHub.
# A separate script rather than part of scripts/test.sh because each package builds on its own:
# on 2 cores 7 to 11 minutes from cold (other builds running), about a minute warm.
#
# Usage: bash scripts/publish-check.sh [--allow-dirty]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# Its own target folder, so that cleaning the packaged crates below costs the workspace nothing.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/publish-check}"
crates=(fencelab-core fencelab-sqlite fencelab-postgres fencelab-etcd fencelab-interop fencelab-cli)

# Cargo treats the packaged crates as registry crates, which never change for one version: it
# unpacks each once (under CARGO_HOME's `registry/src/-<hash>/`) and reuses what it built from
# them, so a second run would build against the first run's fencelab-core. Removing both makes
# every run check the code as it is now.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/fencelab-*
cargo clean --quiet "${crates[@]/#/-p=}"

cargo publish --workspace --dry-run "$@"
