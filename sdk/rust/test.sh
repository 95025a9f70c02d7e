#!/usr/bin/env bash
# Runs the Rust SDK's native unit tests, offline (the SDK has no dependencies), with the Rust
# that builds skills: the first directory on PATH holding a rustc with a wasm32 WASI standard
# library and a cargo (Debian 12's rustc 1.63, the SDK's rust-version, usually sits behind
# rustup's on PATH), else the first one holding a rustc and a cargo. Tools are found through PATH
# only, so a PATH without Rust skips. Exit 0 with a "skipped" line when there is none, unless
# SKILLBOX_REQUIRE_TOOLCHAINS=1 (CI), where that is a failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# wasm RUSTC: whether RUSTC has a wasm32 WASI standard library.
wasm() {
	local sysroot t
	sysroot="$("$1" --print sysroot 2>/dev/null)" || return 1
	for t in wasm32-wasip1 wasm32-wasi; do
		[ -d "$sysroot/lib/rustlib/$t/lib" ] && return 0
	done
	return 1
}

bin="" first=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	case "$d" in /*) ;; *) continue ;; esac # "" and relative entries would run the current directory's
	[ -x "$d/rustc" ] && [ -x "$d/cargo" ] || continue
	[ -n "$first" ] || first="$d"
	if wasm "$d/rustc"; then
		bin="$d"
		break
	fi
done
bin="${bin:-$first}"
if [ -z "$bin" ]; then
	if [ "${SKILLBOX_REQUIRE_TOOLCHAINS:-0}" != 0 ]; then
		echo "sdk/rust: no rustc and cargo on PATH, and SKILLBOX_REQUIRE_TOOLCHAINS is set" >&2
		exit 1
	fi
	echo "sdk/rust: skipped (no rustc and cargo on PATH)"
	exit 0
fi
export RUSTC="$bin/rustc"
[ -x "$bin/rustdoc" ] && export RUSTDOC="$bin/rustdoc"
echo "sdk/rust: $("$RUSTC" --version)"
"$bin/cargo" test --offline -q
