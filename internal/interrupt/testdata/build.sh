#!/usr/bin/env bash
# Rebuilds this package's test modules from their WAT sources (Debian package: wabt).
#   bash internal/interrupt/testdata/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/*.wat; do
  wat2wasm --enable-all "$f" -o "${f%.wat}.wasm"
done
ls -l "$here"
