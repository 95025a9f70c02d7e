#!/usr/bin/env bash
# Rebuilds examples/wasm/c/conformance.wasm from conformance.c and sdk/c/skillbox.h.
# Needs clang with the wasm32-wasi target, wasm-ld (lld) and wasi-libc (Debian: clang lld
# wasi-libc libclang-rt-dev-wasm32). CC overrides the compiler (e.g. CC=clang-19).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
"${CC:-clang}" --target=wasm32-wasi -O2 -mexec-model=reactor -I../../../sdk/c \
	-Wall -Wextra -Wl,--strip-all -o conformance.wasm conformance.c
printf '%9d  %s\n' "$(wc -c <conformance.wasm)" examples/wasm/c/conformance.wasm
