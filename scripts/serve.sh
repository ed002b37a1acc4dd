#!/usr/bin/env bash
# Installs what is missing, then serves the page at http://127.0.0.1:8080/ with live rebuilds.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
if command -v npm >/dev/null 2>&1; then
  PATH="$(npm prefix -g)/bin:$PATH"
fi

bash scripts/setup.sh
echo "Serving Fencelab at http://127.0.0.1:8080/ (Ctrl-C stops it)"
exec trunk serve --address 127.0.0.1 --port 8080 --offline "$@"
