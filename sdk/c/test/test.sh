#!/usr/bin/env bash
# Runs the native unit tests of sdk/c/skillbox.h with the host's compilers: as C99 and as
# C++11 (warnings are errors), with AddressSanitizer and UBSan where the compiler has them.
# Then, if clang can target wasm32-wasi, checks that the header compiles there too (C and
# C++) and imports only what the ABI allows. CC and CXX pick the compilers.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sdk="$(dirname "$here")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

cc="${CC:-cc}"
cxx="${CXX:-c++}"
warn=(-Wall -Wextra -Werror -pedantic -Wshadow -Wcast-qual -Wno-unused-function)

san=()
if echo 'int main(void){return 0;}' | "$cc" -x c -fsanitize=address,undefined -o "$out/probe" - 2>/dev/null; then
	san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
fi

echo "== C99 ($cc${san:+, sanitizers})"
"$cc" -std=c99 "${warn[@]}" "${san[@]}" -g -O1 -I"$sdk" -o "$out/test-c" "$here/test.c" "$here/other.c"
"$out/test-c"

if command -v "$cxx" >/dev/null; then
	echo "== C++11 ($cxx)"
	"$cxx" -std=c++11 "${warn[@]}" -Wno-missing-field-initializers "${san[@]}" -g -O1 -I"$sdk" \
		-x c++ -o "$out/test-cxx" "$here/test.c" "$here/other.c"
	"$out/test-cxx"
fi

wasmcc="${WASM_CC:-clang}"
if command -v "$wasmcc" >/dev/null && echo 'int x;' | "$wasmcc" --target=wasm32-wasi -x c -c -o "$out/probe.o" - 2>/dev/null; then
	echo "== wasm32-wasi ($wasmcc): header compiles as C and C++, imports are allowed"
	cat >"$out/skill.c" <<'C'
#include "skillbox.h"
SB_EXPORT("execute") int execute(void) {
    size_t n; char *in = sb_input(&n); char *v = NULL; sb_response r;
    sb_env("X", &v); sb_get("http://x/", &r); sb_response_free(&r);
    sb_write_file("/w/x", "x", 1); sb_read_file("/w/x", NULL, NULL);
    sb_log(SB_INFO, in); sb_logf(SB_INFO, "%zu", n); sb_set_error("e");
    free(v); free(in);
    return sb_fail(sb_last_error());
}
C
	"$wasmcc" --target=wasm32-wasi -O2 -mexec-model=reactor -std=c99 "${warn[@]}" -I"$sdk" -o "$out/skill.wasm" "$out/skill.c"
	"$wasmcc" --target=wasm32-wasi -O2 -mexec-model=reactor -std=c++11 "${warn[@]}" -I"$sdk" -x c++ -o "$out/skill-cxx.wasm" "$out/skill.c"
	if command -v wasm-objdump >/dev/null; then
		bad="$(wasm-objdump -x -j Import "$out/skill.wasm" "$out/skill-cxx.wasm" | grep -- ' <- ' |
			grep -v -e '<- extism:host/env\.' -e '<- extism:host/user\.skillbox_' -e '<- wasi_snapshot_preview1\.' || true)"
		if [ -n "$bad" ]; then
			echo "unexpected imports:"; echo "$bad"; exit 1
		fi
		for m in "$out/skill.wasm" "$out/skill-cxx.wasm"; do
			wasm-objdump -x -j Export "$m" | grep -q '"execute"' || { echo "$m: no execute export"; exit 1; }
		done
	fi
	echo "ok"
fi
