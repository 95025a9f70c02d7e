#!/usr/bin/env bash
# Rebuilds every bundled skill (skills/*/src -> skills/<id>/execute.wasm) with standard Go.
# Run from anywhere; needs Go 1.24 or later. (The conformance guests: examples/wasm/*/build.sh.)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# build DIR OUT: compiles the main package in DIR to OUT as a reactor module
# (-buildmode=c-shared: a command module would exit after main and refuse later calls).
# -trimpath and -buildvcs=false keep the output independent of the checkout's path and
# commit, so a rebuild of unchanged sources gives the same bytes.
build() {
	local dir="$1" out="$2"
	(cd "$dir" && GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -buildmode=c-shared -o "$out" .)
	printf '%9d  %s\n' "$(wc -c <"$out")" "${out#"$root"/}"
}

for src in "$root"/skills/*/src; do
	build "$src" "$(dirname "$src")/execute.wasm"
done
