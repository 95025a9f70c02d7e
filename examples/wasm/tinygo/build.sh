#!/usr/bin/env bash
# Rebuilds examples/wasm/tinygo/conformance.wasm with TinyGo from the Go guest's source
# (examples/wasm/go): one source, two compilers, and the conformance test holds both to the same
# result. TinyGo comes from scripts/install-tinygo.sh. Extra arguments go to `tinygo build`.
#
# -no-debug: without it TinyGo embeds DWARF that holds absolute paths (this checkout, GOROOT, the
# module cache), so the committed module would change with the machine that built it (TinyGo has
# no -trimpath), and it is 2.7 times larger. With it the build is byte-for-byte reproducible from
# any checkout. Panic messages and the wasm name section are kept.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! command -v tinygo >/dev/null; then
	echo "tinygo is not installed: run scripts/install-tinygo.sh" >&2
	exit 1
fi
cd "$here/../go"
tinygo build -target=wasip1 -buildmode=c-shared -no-debug "$@" -o "$here/conformance.wasm" .
printf '%9d  examples/wasm/tinygo/conformance.wasm\n' "$(wc -c <"$here/conformance.wasm")"
