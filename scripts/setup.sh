#!/usr/bin/env bash
# Installs everything the build and the tests need, skipping what is already there.
# Safe to run again and again; works non-interactively (CI=true, no stdin).
# Only package registries are used (crates.io, npm, Debian): nothing downloads a prebuilt binary.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export DEBIAN_FRONTEND=noninteractive

TRUNK_VERSION="0.21.14"
MDBOOK_VERSION="0.5.4"
BINARYEN_VERSION="132"

say() { printf '\n== setup: %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif have sudo; then
    sudo -n "$@"
  else
    echo "setup: need root for: $*" >&2
    return 1
  fi
}

# --- Rust: the wasm target ---------------------------------------------------------------------
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "wasm32-unknown-unknown target present"
else
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# --- trunk (0.22 needs a newer rustc than this project's machines have) -------------------------
if have trunk && [ "$(trunk --version | awk '{print $2}')" = "$TRUNK_VERSION" ]; then
  say "trunk $TRUNK_VERSION present"
else
  say "installing trunk $TRUNK_VERSION (takes several minutes)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# --- mdbook, for the example book (docs/book). Only `mdbook build` is used: without the default
# features (the live-reload server and file watcher) it builds in about half the time.
if have mdbook && [ "$(mdbook --version | awk '{print $2}')" = "v$MDBOOK_VERSION" ]; then
  say "mdbook $MDBOOK_VERSION present"
else
  say "installing mdbook $MDBOOK_VERSION (takes a few minutes)"
  cargo install mdbook --version "$MDBOOK_VERSION" --locked --no-default-features --features search
fi

# --- crates for every target (the wasm build then needs no network) -----------------------------
say "fetching crates"
cargo fetch

# --- wasm-bindgen CLI: must be exactly the version in Cargo.lock, or trunk tries to download one -
WASM_BINDGEN_VERSION="$(awk '
  $0 == "name = \"wasm-bindgen\"" { found = 1; next }
  found && /^version = / { gsub(/"/, "", $3); print $3; exit }
' Cargo.lock)"
if [ -z "$WASM_BINDGEN_VERSION" ]; then
  echo "setup: could not find wasm-bindgen in Cargo.lock" >&2
  exit 1
fi
if have wasm-bindgen && [ "$(wasm-bindgen --version | awk '{print $2}')" = "$WASM_BINDGEN_VERSION" ]; then
  say "wasm-bindgen-cli $WASM_BINDGEN_VERSION present"
else
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (takes a couple of minutes)"
  # Not --locked: one of its pinned dependency versions is missing from the registry.
  cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" --force
fi

# --- wasm-opt: Debian's binaryen is too old for current rustc output; npm's is current -----------
wasm_opt_version() {
  wasm-opt --version 2>/dev/null | sed -n 's/^wasm-opt version \([0-9][0-9]*\).*/\1/p'
}
if have wasm-opt && [ "$(wasm_opt_version || true)" -ge "$BINARYEN_VERSION" ] 2>/dev/null; then
  say "wasm-opt $(wasm_opt_version) present"
else
  say "installing wasm-opt (binaryen@$BINARYEN_VERSION from npm)"
  npm install -g --no-audit --no-fund "binaryen@$BINARYEN_VERSION"
  export PATH="$(npm prefix -g)/bin:$PATH"
  hash -r
  wasm-opt --version
fi

# --- headless browser for the browser tests -----------------------------------------------------
if [ -x /usr/bin/chromium ]; then
  say "chromium present"
else
  say "installing chromium from Debian"
  as_root apt-get update
  as_root apt-get install -y chromium chromium-driver
fi

# --- PostgreSQL 15 for fencelab-postgres's tests and benchmark (each starts throwaway servers) -----
if [ -x /usr/lib/postgresql/15/bin/pg_ctl ]; then
  say "PostgreSQL 15 present"
else
  say "installing PostgreSQL 15 from Debian"
  as_root apt-get update
  as_root apt-get install -y postgresql
fi

# --- etcd 3.4 for fencelab-etcd's tests and benchmark (each starts throwaway servers) -----------
if [ -x /usr/bin/etcd ]; then
  say "etcd present"
else
  say "installing etcd from Debian"
  as_root apt-get update
  as_root apt-get install -y etcd-server
fi

# --- npm packages: the browser tests' (playwright-core only: it never downloads a browser) and the
# release build's (terser, tools/js). npm records what it installed in node_modules/.package-lock.json;
# a newer lock file means the dependencies changed since, so install again.
for dir in browser-tests tools/js; do
  if [ -f "$dir/node_modules/.package-lock.json" ] &&
    [ ! "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    say "$dir npm packages present"
  else
    say "installing $dir npm packages"
    (cd "$dir" && npm ci --no-audit --no-fund)
  fi
done

say "done"
