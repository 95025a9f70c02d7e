#!/usr/bin/env bash
# Rebuilds examples/wasm/rust/conformance.wasm from this directory's source, offline.
#
# It needs a rustc with a wasm32 WASI standard library: Debian 12's (apt-get install rustc cargo
# libstd-rust-dev-wasm32: Rust 1.63, target wasm32-wasi) or a rustup toolchain with
# `rustup target add wasm32-wasip1`. RUSTC and CARGO override the choice.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# target RUSTC: the WASI target whose standard library RUSTC has, or nothing.
target() {
	local sysroot t
	sysroot="$("$1" --print sysroot 2>/dev/null)" || return 0
	for t in wasm32-wasip1 wasm32-wasi; do
		if [ -d "$sysroot/lib/rustlib/$t/lib" ]; then
			echo "$t"
			return 0
		fi
	done
}

if [ -z "${RUSTC:-}" ]; then
	# rustup's rustc usually comes first on PATH and usually has no wasm32 library.
	for c in "$(command -v rustc || true)" /usr/bin/rustc; do
		if [ -n "$c" ] && [ -n "$(target "$c")" ]; then
			RUSTC="$c"
			break
		fi
	done
fi
if [ -z "${RUSTC:-}" ] || [ -z "$(target "$RUSTC")" ]; then
	echo "build.sh: no rustc with a wasm32-wasip1 or wasm32-wasi standard library" >&2
	echo "  Debian: apt-get install rustc cargo libstd-rust-dev-wasm32; rustup: rustup target add wasm32-wasip1" >&2
	exit 1
fi
tgt="$(target "$RUSTC")"
# The cargo beside that rustc: Debian's cargo 1.65 for Debian's rustc, whose lockfile (version 3)
# every later cargo reads too.
CARGO="${CARGO:-$(dirname "$RUSTC")/cargo}"
[ -x "$CARGO" ] || CARGO=cargo

# The SDK is a path dependency outside this package, so its panic messages would carry the
# checkout's absolute path: keep it out of the module, as go build -trimpath does. (A rebuild in the
# same place gives the same bytes; checkouts at different paths can still differ a little, because
# cargo's crate hashes depend on the path.)
root="$(cd ../../.. && pwd)"
RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$root=skillbox" \
	RUSTC="$RUSTC" "$CARGO" build --release --offline --target "$tgt"
cp "target/$tgt/release/conformance.wasm" conformance.wasm
printf '%9d  examples/wasm/rust/conformance.wasm (%s, %s)\n' "$(wc -c <conformance.wasm)" "$("$RUSTC" --version)" "$tgt"
