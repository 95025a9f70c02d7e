#!/usr/bin/env bash
# Rebuilds examples/wasm/assemblyscript/conformance.wasm from assembly/index.ts with the pinned
# AssemblyScript compiler. Needs Node.js >= 20 and npm; installs the compiler, @extism/as-pdk
# and the SDK (linked from sdk/assemblyscript) from package-lock.json when they are missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi
# --use abort=...: aborts log through the SDK and trap, instead of importing env.abort.
./node_modules/.bin/asc assembly/index.ts --outFile conformance.wasm --optimize --runtime stub \
	--use abort=~lib/@skillbox/sdk/assembly/abort/skillboxAbort
printf '%9d  examples/wasm/assemblyscript/conformance.wasm\n' "$(wc -c <conformance.wasm)"
