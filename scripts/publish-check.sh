#!/usr/bin/env bash
# Checks that every crate meant for crates.io publishes: `cargo publish --dry-run` packages each
# one (crates with `publish = false` are skipped), builds it from its package against the other
# packages, as crates.io would, and uploads nothing. It needs the crates.io index, not GitHub.
# A separate script rather than part of scripts/test.sh because each package builds in a target
# of its own: on 2 cores about 11 minutes from cold, half a minute warm.
#
# Usage: bash scripts/publish-check.sh [--allow-dirty]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"

cargo publish --workspace --dry-run "$@"
