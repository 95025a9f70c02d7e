#!/usr/bin/env bash
# Rebuilds testdata/wasm/*.wasm from these WAT sources (Debian package: wabt).
#   bash testdata/wat/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/*.wat; do
  out="$here/../wasm/$(basename "${f%.wat}").wasm"
  wat2wasm "$f" -o "$out"
done
ls -l "$here/../wasm"
