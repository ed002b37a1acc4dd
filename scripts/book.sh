#!/usr/bin/env bash
# Builds the example book (docs/book) with mdbook and the workspace's mdbook-fencelab, into DEST
# (default dist-book, beside the page build's dist/). To publish it, put a release build of the
# page in docs/book/src/fencelab/ first; the browser tests serve the page build at DEST/fencelab/
# instead of copying it, so here the preprocessor warns that the folder is missing.
# Usage: bash scripts/book.sh [dest-dir]    (bash scripts/setup.sh installs mdbook)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
DEST="${1:-dist-book}"
# mdbook reads a relative --dest-dir from the book's folder; this script's callers mean the root.
case "$DEST" in /*) ;; *) DEST="$PWD/$DEST" ;; esac
mdbook build docs/book --dest-dir "$DEST"
