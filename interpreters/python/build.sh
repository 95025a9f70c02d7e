#!/usr/bin/env bash
# Builds the CPython interpreter that internal/cpython embeds, from Debian bookworm's python3.11
# source package, and writes the two committed outputs:
#
#   internal/cpython/python.wasm   CPython 3.11 for wasm32-wasi with embed.c, snapshotted by Wizer
#                                  after initialisation (stdlib modules pre-imported), stripped
#   internal/cpython/stdlib.zip    the standard library as .pyc (minus stdlib-exclude.txt) and the
#                                  driver module skillbox.py
#
# and interpreters/python/inputs.sha256, the digest of this recipe's inputs.
#
#   build.sh           build (about 3-8 minutes on 2 cores; downloads are cached in .build/)
#   build.sh --check   exit 1 when inputs.sha256 does not match the inputs (CI rebuilds then)
#
# Needs (Debian 12): clang lld wasi-libc libclang-rt-dev-wasm32 llvm dpkg-dev python3.11 npm,
# and network access to deb.debian.org and the npm registry. SKILLBOX_PY_BUILD sets the work
# directory (default interpreters/python/.build).
set -euo pipefail

PY_DEB_VERSION=3.11.2-6+deb12u8
PY_SRC_DIR=python3.11-3.11.2
# The .dsc lists the sha256 of the tarballs, and dpkg-source checks them: pinning it pins all.
PY_DSC_SHA256=197fa19ab45f41c820f40f6d9ead671c2ea29ddc53ba9424b36f1bf58458a10e
ZLIB_DEB_VERSION=1:1.2.13.dfsg-1
ZLIB_SRC_DIR=zlib-1.2.13.dfsg
ZLIB_DSC=zlib_1.2.13.dfsg-1.dsc
ZLIB_DSC_SHA256=3fa1e6b2fc525062aa88207dda52fed8e045373c809d362fe8a2bfbf7cf515a8
WIZER_PKG=@bytecodealliance/wizer-linux-x64@11.0.3
GUEST_STDLIB=/usr/local/lib/python3.11

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$repo/internal/cpython
work=${SKILLBOX_PY_BUILD:-$here/.build}
inputs=(build.sh embed.c skillbox.py stdlib-exclude.txt wizer-stubs.wat deb-src.sources mkstdlib.py)

inputs_digest() { (cd "$here" && sha256sum "${inputs[@]}") | sha256sum | cut -d' ' -f1; }

if [ "${1:-}" = --check ]; then
	want=$(cat "$here/inputs.sha256" 2>/dev/null || true)
	got=$(inputs_digest)
	if [ "$want" != "$got" ] || [ ! -s "$out/python.wasm" ] || [ ! -s "$out/stdlib.zip" ]; then
		echo "interpreters/python: the inputs changed (inputs.sha256 $want, inputs now $got) or an output is missing: run 'make interpreters' and commit internal/cpython/python.wasm, internal/cpython/stdlib.zip and interpreters/python/inputs.sha256" >&2
		exit 1
	fi
	echo "interpreters/python: up to date ($got)"
	exit 0
fi

need() {
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "build.sh: $t is not on PATH (Debian: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32 llvm dpkg-dev python3.11 npm)" >&2; exit 1; }
	done
}
need clang wasm-ld llvm-ar llvm-ranlib llvm-nm llvm-strip dpkg-source apt-get npm
BUILD_PYTHON=/usr/bin/python3.11 # the .pyc magic must be 3.11's
[ -x "$BUILD_PYTHON" ] || { echo "build.sh: $BUILD_PYTHON is missing (apt-get install python3.11)" >&2; exit 1; }
[ -f /usr/lib/wasm32-wasi/libc.a ] || { echo "build.sh: wasi-libc is missing (apt-get install wasi-libc)" >&2; exit 1; }

mkdir -p "$work"
step() { echo "== $(date +%T) $*"; }

# 1. The sources of python3.11 and zlib: a private apt configuration with deb-src entries, so
#    the machine's own is untouched; apt checks each .dsc against the signed Sources index, and
#    the .dsc pins below check that it is the one this recipe was written for.
src=$work/src/$PY_SRC_DIR
zsrc=$work/src/$ZLIB_SRC_DIR
if [ ! -f "$work/src/.skillbox-extracted" ]; then
	step "fetch python3.11=$PY_DEB_VERSION zlib=$ZLIB_DEB_VERSION"
	apt=$work/apt
	rm -rf "$apt" "$work/src"
	mkdir -p "$apt/sources" "$apt/lists/partial" "$apt/cache/archives/partial" "$work/src"
	cp "$here/deb-src.sources" "$apt/sources/"
	APTO=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/sources"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1)
	apt-get -q "${APTO[@]}" update >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
	(cd "$work/src" && apt-get -q "${APTO[@]}" source --download-only "python3.11=$PY_DEB_VERSION" "zlib=$ZLIB_DEB_VERSION") \
		>>"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
	(cd "$work/src" && sha256sum -c --quiet -) <<-EOF || { echo "build.sh: a .dsc does not have its pinned sha256" >&2; exit 1; }
	$PY_DSC_SHA256  python3.11_$PY_DEB_VERSION.dsc
	$ZLIB_DSC_SHA256  $ZLIB_DSC
	EOF
	(cd "$work/src" && dpkg-source --no-check -x "python3.11_$PY_DEB_VERSION.dsc" "$PY_SRC_DIR" &&
		dpkg-source --no-check -x "$ZLIB_DSC" "$ZLIB_SRC_DIR") >>"$work/apt.log" 2>&1
	touch "$work/src/.skillbox-extracted"
fi

# 2. A WASI SDK made of Debian's clang 14, lld and wasi-libc, in the layout CPython's
#    Tools/wasm/wasi-env expects; the sysroot points at wasi-libc only (no glibc headers).
sdk=$work/wasi-sdk
rm -rf "$sdk"
mkdir -p "$sdk/bin" "$sdk/share/wasi-sysroot/include" "$sdk/share/wasi-sysroot/lib"
ln -s /usr/include/wasm32-wasi "$sdk/share/wasi-sysroot/include/wasm32-wasi"
ln -s /usr/lib/wasm32-wasi "$sdk/share/wasi-sysroot/lib/wasm32-wasi"
printf '#!/bin/sh\nexec /usr/bin/clang --target=wasm32-wasi "$@"\n' >"$sdk/bin/clang"
printf '#!/bin/sh\nexec /usr/bin/clang++ --target=wasm32-wasi "$@"\n' >"$sdk/bin/clang++"
printf '#!/bin/sh\nexec /usr/bin/clang -E --target=wasm32-wasi "$@"\n' >"$sdk/bin/clang-cpp"
chmod +x "$sdk/bin/"*
ln -s "$(command -v wasm-ld)" "$sdk/bin/wasm-ld"
ln -s "$(command -v llvm-ar)" "$sdk/bin/llvm-ar"
ln -s "$(command -v llvm-ranlib)" "$sdk/bin/ranlib"
ln -s "$(command -v llvm-nm)" "$sdk/bin/llvm-nm"
ln -s "$(command -v llvm-strip)" "$sdk/bin/llvm-strip"
export WASI_SDK_PATH=$sdk
sysroot=$sdk/share/wasi-sysroot

# 3. zlib, as a static library (its own build system wants a native toolchain: the sources are
#    few enough to compile directly).
zlib=$work/zlib
if [ ! -f "$zlib/libz.a" ]; then
	step "zlib"
	rm -rf "$zlib"
	mkdir -p "$zlib"
	for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate inftrees trees uncompr zutil; do
		/usr/bin/clang --target=wasm32-wasi "--sysroot=$sysroot" -O2 -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN \
			-c "$zsrc/$f.c" -o "$zlib/$f.o"
	done
	llvm-ar rcs "$zlib/libz.a" "$zlib"/*.o
	cp "$zsrc/zlib.h" "$zsrc/zconf.h" "$zlib/"
fi

# 4. CPython's own WASI cross-build (configure + make), redone when its inputs change.
bld=$src/builddir/wasi
stamp="$PY_DEB_VERSION $ZLIB_DEB_VERSION $(sha256sum "$src/Tools/wasm/config.site-wasm32-wasi" | cut -d' ' -f1)"
if [ ! -f "$bld/libpython3.11.a" ] || [ "$(cat "$bld/.skillbox-stamp" 2>/dev/null)" != "$stamp" ]; then
	step "configure"
	rm -rf "$bld"
	mkdir -p "$bld"
	(cd "$bld" && CONFIG_SITE=../../Tools/wasm/config.site-wasm32-wasi ZLIB_CFLAGS="-I$zlib" ZLIB_LIBS="-L$zlib -lz" \
		../../Tools/wasm/wasi-env ../../configure -C --host=wasm32-unknown-wasi --build="$(../../config.guess)" \
		--with-build-python="$BUILD_PYTHON" >configure.log 2>&1) || { tail -40 "$bld/configure.log" >&2; exit 1; }
	grep -q '^MODULE_ZLIB_STATE=yes' "$bld/Makefile" || { echo "build.sh: configure did not take zlib (see $bld/config.log)" >&2; exit 1; }
	step "make"
	(cd "$bld" && ../../Tools/wasm/wasi-env make -j"$(nproc)" >make.log 2>&1) || { tail -40 "$bld/make.log" >&2; exit 1; }
	echo "$stamp" >"$bld/.skillbox-stamp"
fi

# 5. The embedding: embed.c linked against libpython, a 512 KiB stack placed first (so that a
#    C stack overflow traps on the first out-of-bounds access instead of overwriting data).
step "link embed.c"
emb=$work/embed
rm -rf "$emb"
mkdir -p "$emb"
cc=(/usr/bin/clang --target=wasm32-wasi "--sysroot=$sysroot")
"${cc[@]}" -O2 -Wall -Werror -I "$src/Include" -I "$bld" -c "$here/embed.c" -o "$emb/embed.o"
"${cc[@]}" -z stack-size=524288 -Wl,--stack-first -o "$emb/python.wasm" "$emb/embed.o" \
	"$bld/libpython3.11.a" "$bld/Modules/_decimal/libmpdec/libmpdec.a" "$bld/Modules/expat/libexpat.a" "$zlib/libz.a" \
	-lwasi-emulated-signal -lwasi-emulated-getpid -lwasi-emulated-process-clocks -lm
llvm-strip "$emb/python.wasm"

# 6. The standard library: .pyc only (unchecked-hash: no source mtimes to compare), laid out as
#    the guest sees it, as a directory for Wizer and as a zip for the runner.
step "stdlib"
sysconfigdata=$(ls "$bld"/build/lib.wasi-wasm32-3.11/_sysconfigdata_*.py)
"$BUILD_PYTHON" "$here/mkstdlib.py" --lib "$src/Lib" --exclude "$here/stdlib-exclude.txt" \
	--extra "$here/skillbox.py" --extra "$sysconfigdata" --guest "$GUEST_STDLIB" \
	--dir "$emb/stdlib" --zip "$emb/stdlib.zip"

# 7. The snapshot: Wizer runs wizer.initialize (Py_Initialize, the pre-imports) and writes the
#    initialised memory back as data segments.
step "wizer"
wz=$work/wizer
if [ ! -x "$wz/node_modules/@bytecodealliance/wizer-linux-x64/wizer" ]; then
	mkdir -p "$wz"
	(cd "$wz" && npm install --no-audit --no-fund --no-save --prefix "$wz" "$WIZER_PKG" >/dev/null)
fi
"$wz/node_modules/@bytecodealliance/wizer-linux-x64/wizer" --allow-wasi --inherit-stdio true \
	--init-func wizer.initialize --preload "skillbox=$here/wizer-stubs.wat" \
	--mapdir "$GUEST_STDLIB::$emb/stdlib" -o "$emb/snap.wasm" "$emb/python.wasm"
llvm-strip "$emb/snap.wasm"

mkdir -p "$out"
cp "$emb/snap.wasm" "$out/python.wasm"
cp "$emb/stdlib.zip" "$out/stdlib.zip"
inputs_digest >"$here/inputs.sha256"
step "done: $(du -b "$out/python.wasm" | cut -f1) bytes python.wasm, $(du -b "$out/stdlib.zip" | cut -f1) bytes stdlib.zip"
