#!/usr/bin/env bash
# Rebuilds examples/wasm/go/conformance.wasm from this directory's source with standard Go.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -buildmode=c-shared -o conformance.wasm .
printf '%9d  examples/wasm/go/conformance.wasm\n' "$(wc -c <conformance.wasm)"
