#!/usr/bin/env bash
# Builds the CPython interpreter that internal/cpython embeds, from Debian bookworm's python3.11
# source package, and writes the two committed outputs:
#
#   internal/cpython/python.wasm   CPython 3.11 for wasm32-wasi with embed.c, snapshotted by Wizer
#                                  after initialisation (stdlib modules pre-imported), stripped
#   internal/cpython/stdlib.zip    the standard library as .pyc (minus stdlib-exclude.txt), the
#                                  driver module skillbox.py, and the Python packages of lxml and
#                                  Pillow (PIL), whose C is compiled into python.wasm
#
# and interpreters/python/inputs.sha256, the digest of this recipe's inputs.
#
#   build.sh           build (about 3-8 minutes on 2 cores; downloads are cached in .build/)
#   build.sh --check   exit 1 when inputs.sha256 does not match the inputs (CI rebuilds then)
#
# Needs (Debian 12): clang lld wasi-libc libclang-rt-dev-wasm32 llvm dpkg-dev python3.11 npm tcl
# make, and network access to deb.debian.org and the npm registry. SKILLBOX_PY_BUILD sets the work
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
BZIP2_DEB_VERSION=1.0.8-5
BZIP2_SRC_DIR=bzip2-1.0.8
BZIP2_DSC=bzip2_1.0.8-5.dsc
BZIP2_DSC_SHA256=ed9c40f4de3f9e064535e15eac1c61a0f606763db98f4579dbc04067b94a8944
XZ_DEB_VERSION=5.4.1-1+deb12u2
XZ_SRC_DIR=xz-utils-5.4.1
XZ_DSC=xz-utils_5.4.1-1+deb12u2.dsc
XZ_DSC_SHA256=bffc9917562b5787661379621bb1f7510bf7271b03d8ce4181cebc84b90d3c35
SQLITE_DEB_VERSION=3.40.1-2+deb12u2
SQLITE_SRC_DIR=sqlite3-3.40.1
SQLITE_DSC=sqlite3_3.40.1-2+deb12u2.dsc
SQLITE_DSC_SHA256=ee3459ae9d00939741c7708fc1b8ce1bde12d8c3fb1dfa005bbbc8651d884e23
# lxml (lxml.etree, lxml.objectify) over libxml2 and libxslt/libexslt, compiled in: their own
# fetch (1b) and stamp, so that adding or updating them does not rebuild CPython.
LIBXML2_DEB_VERSION=2.9.14+dfsg-1.3~deb12u6
LIBXML2_SRC_DIR=libxml2-2.9.14+dfsg
LIBXML2_DSC=libxml2_2.9.14+dfsg-1.3~deb12u6.dsc
LIBXML2_DSC_SHA256=d86ce3efb1b75d2781f72f5cdd187474c148a915d610295c85162681bb070a65
LIBXSLT_DEB_VERSION=1.1.35-1+deb12u4
LIBXSLT_SRC_DIR=libxslt-1.1.35
LIBXSLT_DSC=libxslt_1.1.35-1+deb12u4.dsc
LIBXSLT_DSC_SHA256=9d8870c419f1c5577e6ab6daae0697ec08c5ba85c69df5dce01682e6d56ae4c4
LXML_DEB_VERSION=4.9.2-1+deb12u1
LXML_SRC_DIR=lxml-4.9.2
LXML_DSC=lxml_4.9.2-1+deb12u1.dsc
LXML_DSC_SHA256=7215d1b99267651e9cfb3ae9856aac74b529e38b3e998b591835e5995919d4ea
# Pillow (PIL._imaging, _imagingmath, _imagingmorph) over zlib and libjpeg-turbo, compiled in: its
# own fetch (1c, 1d) and stamp too. libjpeg reports a fatal error by calling back into Pillow,
# which longjmps out; WASI has no setjmp/longjmp (not without the exception-handling proposal), so
# here that callback prints libjpeg's message and aborts: the run ends in a trap (4c). No
# freetype, libtiff, openjpeg, webp, lcms or libimagequant: those formats and features fail with
# Pillow's own errors ("... not available", ImportError and the like).
PILLOW_DEB_VERSION=9.4.0-1.1+deb12u1
PILLOW_SRC_DIR=pillow-9.4.0
PILLOW_DSC=pillow_9.4.0-1.1+deb12u1.dsc
PILLOW_DSC_SHA256=a281ffb21b4dc6d23aaf47c72233d0f44ee446454c80c8002c7098984c8b972b
JPEG_DEB_VERSION=1:2.1.5-2
JPEG_SRC_DIR=libjpeg-turbo-2.1.5
JPEG_DSC=libjpeg-turbo_2.1.5-2.dsc
JPEG_DSC_SHA256=d718ead0dfbcbc8523665c02a7f7152e31039ded641d022868722623bb3b486d
WIZER_PKG=@bytecodealliance/wizer-linux-x64@11.0.3
GUEST_STDLIB=/usr/local/lib/python3.11

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$repo/internal/cpython
work=${SKILLBOX_PY_BUILD:-$here/.build}
inputs=(build.sh embed.c skillbox.py skillbox_subprocess.py stdlib-exclude.txt wizer-stubs.wat deb-src.sources mkstdlib.py sqlite-vfs.c)

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
		command -v "$t" >/dev/null || { echo "build.sh: $t is not on PATH (Debian: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32 llvm dpkg-dev python3.11 npm tcl)" >&2; exit 1; }
	done
}
need clang wasm-ld llvm-ar llvm-ranlib llvm-nm llvm-strip dpkg-source apt-get npm tclsh
BUILD_PYTHON=/usr/bin/python3.11 # the .pyc magic must be 3.11's
[ -x "$BUILD_PYTHON" ] || { echo "build.sh: $BUILD_PYTHON is missing (apt-get install python3.11)" >&2; exit 1; }
[ -f /usr/lib/wasm32-wasi/libc.a ] || { echo "build.sh: wasi-libc is missing (apt-get install wasi-libc)" >&2; exit 1; }

mkdir -p "$work"
step() { echo "== $(date +%T) $*"; }

# fetch DIR PKG=VERSION|DSC|SHA256|SRCDIR...: Debian source packages into DIR, each extracted into
# DIR/SRCDIR, through a private apt configuration with deb-src entries (DIR.apt), so the
# machine's own is untouched; apt checks each .dsc against the signed Sources index, and its
# pinned sha256 checks that it is the one this recipe was written for. DIR.log says what apt did.
fetch() {
	local dir=$1 apt=$1.apt log=$1.log pkgs=() sums="" spec pv dsc sha sdir
	shift
	rm -rf "$apt" "$dir"
	mkdir -p "$apt/sources" "$apt/lists/partial" "$apt/cache/archives/partial" "$dir"
	cp "$here/deb-src.sources" "$apt/sources/"
	local APTO=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/sources"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1)
	for spec in "$@"; do
		IFS='|' read -r pv dsc sha sdir <<<"$spec"
		pkgs+=("$pv")
		sums+="$sha  $dsc"$'\n'
	done
	apt-get -q "${APTO[@]}" update >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
	(cd "$dir" && apt-get -q "${APTO[@]}" source --download-only "${pkgs[@]}") >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }
	(cd "$dir" && printf '%s' "$sums" | sha256sum -c --quiet -) || { echo "build.sh: a .dsc does not have its pinned sha256" >&2; exit 1; }
	for spec in "$@"; do
		IFS='|' read -r pv dsc sha sdir <<<"$spec"
		(cd "$dir" && dpkg-source --no-check -x "$dsc" "$sdir") >>"$log" 2>&1 || { tail -n 20 "$log" >&2; exit 1; }
	done
}

# fetch_once DIR "BUILT..." PKG=VERSION|DSC|SHA256|SRCDIR...: fetch, unless DIR holds those
# versions already (DIR/.skillbox-extracted says which); when it fetches, it first removes BUILT,
# the directories of $work (by name) that were built from the old sources.
fetch_once() {
	local dir=$1 built=$2 key="" names="" spec b
	shift 2
	for spec in "$@"; do
		spec=${spec%%|*}
		key+="${key:+ }${spec#*=}"
		names+=" $spec"
	done
	[ "$(cat "$dir/.skillbox-extracted" 2>/dev/null)" != "$key" ] || return 0
	step "fetch$names"
	for b in $built; do rm -rf "${work:?}/$b"; done
	fetch "$dir" "$@"
	echo "$key" >"$dir/.skillbox-extracted"
}

# 1. The sources of python3.11, zlib, bzip2, xz-utils (liblzma) and sqlite3.
src=$work/src/$PY_SRC_DIR
zsrc=$work/src/$ZLIB_SRC_DIR
bzsrc=$work/src/$BZIP2_SRC_DIR
xzsrc=$work/src/$XZ_SRC_DIR
sqsrc=$work/src/$SQLITE_SRC_DIR
sources="$PY_DEB_VERSION $ZLIB_DEB_VERSION $BZIP2_DEB_VERSION $XZ_DEB_VERSION $SQLITE_DEB_VERSION"
fetch_once "$work/src" "" "python3.11=$PY_DEB_VERSION|python3.11_$PY_DEB_VERSION.dsc|$PY_DSC_SHA256|$PY_SRC_DIR" \
	"zlib=$ZLIB_DEB_VERSION|$ZLIB_DSC|$ZLIB_DSC_SHA256|$ZLIB_SRC_DIR" \
	"bzip2=$BZIP2_DEB_VERSION|$BZIP2_DSC|$BZIP2_DSC_SHA256|$BZIP2_SRC_DIR" \
	"xz-utils=$XZ_DEB_VERSION|$XZ_DSC|$XZ_DSC_SHA256|$XZ_SRC_DIR" \
	"sqlite3=$SQLITE_DEB_VERSION|$SQLITE_DSC|$SQLITE_DSC_SHA256|$SQLITE_SRC_DIR"

# 1b. The sources of libxml2, libxslt and lxml, into their own directory, so that adding or
#     updating them does not rebuild CPython. lxml's orig tarball ships the C that Cython
#     generated from its .pyx, and Debian's patches (its security fixes) update that C too
#     (Update-.c-files.patch): no Cython is needed.
xsrc=$work/src-lxml
xml2src=$xsrc/$LIBXML2_SRC_DIR
xsltsrc=$xsrc/$LIBXSLT_SRC_DIR
lxsrc=$xsrc/$LXML_SRC_DIR
fetch_once "$xsrc" "libxml2 libxslt lxml" "libxml2=$LIBXML2_DEB_VERSION|$LIBXML2_DSC|$LIBXML2_DSC_SHA256|$LIBXML2_SRC_DIR" \
	"libxslt=$LIBXSLT_DEB_VERSION|$LIBXSLT_DSC|$LIBXSLT_DSC_SHA256|$LIBXSLT_SRC_DIR" \
	"lxml=$LXML_DEB_VERSION|$LXML_DSC|$LXML_DSC_SHA256|$LXML_SRC_DIR"

# 1c. The source of Pillow, into its own directory as lxml's. (Its orig tarball is 40 MB, most of
#     it test images; none of them is used.)
psrc=$work/src-pillow
pilsrc=$psrc/$PILLOW_SRC_DIR
fetch_once "$psrc" pillow "pillow=$PILLOW_DEB_VERSION|$PILLOW_DSC|$PILLOW_DSC_SHA256|$PILLOW_SRC_DIR"

# 1d. The source of libjpeg-turbo (Pillow's JPEG codec), into its own directory too.
jsrc=$work/src-jpeg
jpegsrc=$jsrc/$JPEG_SRC_DIR
fetch_once "$jsrc" libjpeg "libjpeg-turbo=$JPEG_DEB_VERSION|$JPEG_DSC|$JPEG_DSC_SHA256|$JPEG_SRC_DIR"

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

# 3b. bzip2's libbz2, compiled directly as zlib is.
bz2=$work/bzip2
if [ ! -f "$bz2/libbz2.a" ]; then
	step "bzip2"
	rm -rf "$bz2"
	mkdir -p "$bz2"
	for f in blocksort huffman crctable randtable compress decompress bzlib; do
		/usr/bin/clang --target=wasm32-wasi "--sysroot=$sysroot" -O2 -D_FILE_OFFSET_BITS=64 -c "$bzsrc/$f.c" -o "$bz2/$f.o"
	done
	llvm-ar rcs "$bz2/libbz2.a" "$bz2"/*.o
	cp "$bzsrc/bzlib.h" "$bz2/"
fi

# 3c. xz-utils' liblzma, by its own configure, without threads; its signal-mask helper (used by
#     the xz program, not the library) is left out on WASI, which has no signal sets. Debian's
#     patches leave the autotools files newer than what they generate: make must not rerun them.
xz=$work/xz
if [ ! -f "$xz/lib/liblzma.a" ]; then
	step "liblzma"
	rm -rf "$xz" "$work/xz-build"
	cp -a "$xzsrc" "$work/xz-build"
	sed -i 's|^#if !(defined(_WIN32) \&\& !defined(__CYGWIN__))$|#if !(defined(_WIN32) \&\& !defined(__CYGWIN__)) \&\& !defined(__wasi__)|' \
		"$work/xz-build/src/common/mythread.h"
	grep -q '__wasi__' "$work/xz-build/src/common/mythread.h" || { echo "build.sh: the liblzma patch did not apply" >&2; exit 1; }
	(cd "$work/xz-build" && CC="/usr/bin/clang --target=wasm32-wasi --sysroot=$sysroot" AR=llvm-ar RANLIB=llvm-ranlib \
		CFLAGS="-O2 -D_WASI_EMULATED_SIGNAL" ./configure --host=wasm32-unknown-wasi --build="$(./build-aux/config.guess)" \
		--disable-shared --enable-static --disable-threads --disable-xz --disable-xzdec --disable-lzmadec \
		--disable-lzmainfo --disable-lzma-links --disable-scripts --disable-doc --disable-nls --prefix="$xz" \
		>configure.log 2>&1 &&
		make -C src/liblzma -j"$(nproc)" ACLOCAL=: AUTOCONF=: AUTOMAKE=: AUTOHEADER=: install >make.log 2>&1) ||
		{ tail -n 40 "$work/xz-build/configure.log" "$work/xz-build/make.log" >&2; exit 1; }
fi

# 3d. SQLite: its amalgamation (sqlite3.c) made by its own build on the host (which needs tclsh),
#     then compiled for WASI without threads, extensions, WAL or mmap, over the demo VFS of its
#     sources (POSIX files, no locking: WASI has no fcntl locks), which sqlite-vfs.c registers.
sq=$work/sqlite
if [ ! -f "$sq/libsqlite3.a" ]; then
	step "sqlite3"
	rm -rf "$sq" "$work/sqlite-build"
	mkdir -p "$sq" "$work/sqlite-build"
	(cd "$work/sqlite-build" && CC=/usr/bin/clang "$sqsrc/configure" --disable-tcl >configure.log 2>&1 && make sqlite3.c >make.log 2>&1) ||
		{ tail -n 40 "$work/sqlite-build/configure.log" "$work/sqlite-build/make.log" >&2; exit 1; }
	sqflags=(-O2 -DSQLITE_OS_OTHER=1 -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_OMIT_WAL
		-DSQLITE_MAX_MMAP_SIZE=0 -DSQLITE_DQS=0 -DSQLITE_TEMP_STORE=3)
	cp "$work/sqlite-build/sqlite3.h" "$sq/"
	for f in "$work/sqlite-build/sqlite3.c" "$sqsrc/src/test_demovfs.c" "$here/sqlite-vfs.c"; do
		/usr/bin/clang --target=wasm32-wasi "--sysroot=$sysroot" "${sqflags[@]}" -I "$sq" -c "$f" -o "$sq/$(basename "$f" .c).o"
	done
	llvm-ar rcs "$sq/libsqlite3.a" "$sq"/*.o
fi

# 3e. libxml2, by its own configure: static, without threads, HTTP, FTP, dlopen'd modules or
#     lzma; with zlib (above) and iconv (wasi-libc has musl's). Its config.sub predates WASI: the
#     one of CPython's sources knows it. WASI has no dup(): reading or writing a compressed "-"
#     (stdin/stdout) fails instead (xmlIO.c, the only user). As for liblzma, make must not rerun
#     the autotools, and only the library is built (xmllint and the tests are programs).
xml2=$work/libxml2
automake_off=(ACLOCAL=: AUTOCONF=: AUTOMAKE=: AUTOHEADER=:)
if [ ! -f "$xml2/lib/libxml2.a" ]; then
	step "libxml2"
	rm -rf "$xml2" "$work/libxml2-build"
	cp -a "$xml2src" "$work/libxml2-build"
	cp "$src/config.sub" "$src/config.guess" "$work/libxml2-build/"
	sed -i 's#int duped_fd = dup(fileno(\(stdin\|stdout\)));#int duped_fd = -1; /* WASI: no dup() */#' "$work/libxml2-build/xmlIO.c"
	[ "$(grep -c 'WASI: no dup' "$work/libxml2-build/xmlIO.c")" = 2 ] || { echo "build.sh: the libxml2 patch did not apply" >&2; exit 1; }
	(cd "$work/libxml2-build" && CC="/usr/bin/clang --target=wasm32-wasi --sysroot=$sysroot" AR=llvm-ar RANLIB=llvm-ranlib \
		CFLAGS="-O2" CPPFLAGS="-I$zlib" LDFLAGS="-L$zlib" ./configure --host=wasm32-unknown-wasi --build="$(./config.guess)" \
		--disable-shared --enable-static --without-threads --without-thread-alloc --without-http --without-ftp \
		--without-python --without-lzma --without-modules --without-readline --without-history --with-zlib \
		--prefix="$xml2" >configure.log 2>&1 &&
		make -j"$(nproc)" "${automake_off[@]}" libxml2.la >make.log 2>&1 &&
		make "${automake_off[@]}" install-libLTLIBRARIES install-binSCRIPTS >>make.log 2>&1 &&
		make -C include "${automake_off[@]}" install >>make.log 2>&1) ||
		{ tail -n 40 "$work/libxml2-build/configure.log" "$work/libxml2-build/make.log" >&2; exit 1; }
fi

# 3f. libxslt and libexslt, by their configure, over that libxml2 (its build tree): static,
#     without libgcrypt (EXSLT's crypto functions), plugins (dlopen) or Python bindings.
xslt=$work/libxslt
if [ ! -f "$xslt/lib/libexslt.a" ]; then
	step "libxslt"
	rm -rf "$xslt" "$work/libxslt-build"
	cp -a "$xsltsrc" "$work/libxslt-build"
	cp "$src/config.sub" "$src/config.guess" "$work/libxslt-build/"
	(cd "$work/libxslt-build" && CC="/usr/bin/clang --target=wasm32-wasi --sysroot=$sysroot" AR=llvm-ar RANLIB=llvm-ranlib \
		CFLAGS="-O2" ./configure --host=wasm32-unknown-wasi --build="$(./config.guess)" --disable-shared --enable-static \
		--without-python --without-crypto --without-plugins --with-libxml-src="$work/libxml2-build" --prefix="$xslt" \
		>configure.log 2>&1 &&
		make -C libxslt -j"$(nproc)" "${automake_off[@]}" install >make.log 2>&1 &&
		make -C libexslt -j"$(nproc)" "${automake_off[@]}" install >>make.log 2>&1) ||
		{ tail -n 40 "$work/libxslt-build/configure.log" "$work/libxslt-build/make.log" >&2; exit 1; }
fi

# 3g. libjpeg-turbo's libjpeg, as its CMake build makes it with WITH_SIMD=0 and WITH_TURBOJPEG=0
#     (the libjpeg v6b API, as Debian's libjpeg62-turbo; arithmetic coding and the in-memory
#     source and destination on, as there): its sources are compiled directly, as zlib's, and the
#     three headers CMake would configure are written from their templates here. Its Huffman
#     encoders count bits with clz (one WebAssembly instruction), as they do on Arm, instead of
#     a 64 KiB table each, which every run would copy in with the memory image.
jpeg=$work/libjpeg
if [ ! -f "$jpeg/libjpeg.a" ]; then
	step "libjpeg-turbo"
	rm -rf "$jpeg"
	mkdir -p "$jpeg"
	jver=${JPEG_SRC_DIR#libjpeg-turbo-}
	IFS=. read -r jmaj jmin jrev <<<"$jver"
	sed -e 's/@JPEG_LIB_VERSION@/62/' -e "s/@VERSION@/$jver/" -e 's/@BITS_IN_JSAMPLE@/8/' \
		-e "s/@LIBJPEG_TURBO_VERSION_NUMBER@/$(printf '%d%03d%03d' "$jmaj" "$jmin" "$jrev")/" \
		-e 's/^#cmakedefine \(C_ARITH_CODING_SUPPORTED\|D_ARITH_CODING_SUPPORTED\|MEM_SRCDST_SUPPORTED\) 1$/#define \1 1/' \
		-e 's,^#cmakedefine \(WITH_SIMD\|RIGHT_SHIFT_IS_UNSIGNED\) 1$,/* #undef \1 */,' "$jpegsrc/jconfig.h.in" >"$jpeg/jconfig.h"
	sed -e "s/@BUILD@/$JPEG_DEB_VERSION/" -e 's/@INLINE@/inline __attribute__((always_inline))/' -e 's/@THREAD_LOCAL@//' \
		-e 's/@CMAKE_PROJECT_NAME@/libjpeg-turbo/' -e "s/@VERSION@/$jver/" -e 's/@SIZE_T@/4/' \
		-e 's/^#cmakedefine HAVE_BUILTIN_CTZL$/#define HAVE_BUILTIN_CTZL/' -e 's|^#cmakedefine HAVE_INTRIN_H$|/* #undef HAVE_INTRIN_H */|' \
		"$jpegsrc/jconfigint.h.in" >"$jpeg/jconfigint.h"
	sed "s/@COPYRIGHT_YEAR@/$(sed -n 's/^set(COPYRIGHT_YEAR "\(.*\)")$/\1/p' "$jpegsrc/CMakeLists.txt")/" "$jpegsrc/jversion.h.in" >"$jpeg/jversion.h"
	! grep -n '@\|cmakedefine' "$jpeg/jconfig.h" "$jpeg/jconfigint.h" "$jpeg/jversion.h" || { echo "build.sh: libjpeg-turbo's header templates changed" >&2; exit 1; }
	mapfile -t jpegc < <(sed -n '/^set(JPEG_SOURCES jcapimin\.c/,/)$/p' "$jpegsrc/CMakeLists.txt" | tr -s ' ()' '\n' | grep '\.c$')
	[ "${#jpegc[@]}" -gt 40 ] || { echo "build.sh: libjpeg-turbo's CMakeLists.txt no longer lists JPEG_SOURCES as expected" >&2; exit 1; }
	for f in "${jpegc[@]}" jaricom.c jcarith.c jdarith.c jsimd_none.c; do
		/usr/bin/clang --target=wasm32-wasi "--sysroot=$sysroot" -O2 -DNDEBUG -DUSE_CLZ_INTRINSIC -I "$jpeg" -I "$jpegsrc" -c "$jpegsrc/$f" -o "$jpeg/${f%.c}.o"
	done
	llvm-ar rcs "$jpeg/libjpeg.a" "$jpeg"/*.o
	cp "$jpegsrc/jpeglib.h" "$jpegsrc/jmorecfg.h" "$jpegsrc/jerror.h" "$jpeg/"
fi

# 4. CPython's own WASI cross-build (configure + make), redone when its inputs change.
bld=$src/builddir/wasi
stamp="$sources $(sha256sum "$src/Tools/wasm/config.site-wasm32-wasi" | cut -d' ' -f1)"
if [ ! -f "$bld/libpython3.11.a" ] || [ "$(cat "$bld/.skillbox-stamp" 2>/dev/null)" != "$stamp" ]; then
	step "configure"
	rm -rf "$bld"
	mkdir -p "$bld"
	(cd "$bld" && CONFIG_SITE=../../Tools/wasm/config.site-wasm32-wasi ZLIB_CFLAGS="-I$zlib" ZLIB_LIBS="-L$zlib -lz" \
		BZIP2_CFLAGS="-I$bz2" BZIP2_LIBS="-L$bz2 -lbz2" LIBLZMA_CFLAGS="-I$xz/include" LIBLZMA_LIBS="-L$xz/lib -llzma" \
		LIBSQLITE3_CFLAGS="-I$sq" LIBSQLITE3_LIBS="-L$sq -lsqlite3" \
		../../Tools/wasm/wasi-env ../../configure -C --host=wasm32-unknown-wasi --build="$(../../config.guess)" \
		--with-build-python="$BUILD_PYTHON" >configure.log 2>&1) || { tail -40 "$bld/configure.log" >&2; exit 1; }
	for m in ZLIB _BZ2 _LZMA _SQLITE3; do
		grep -q "^MODULE_${m}_STATE=yes" "$bld/Makefile" || { echo "build.sh: configure did not take $m (see $bld/config.log)" >&2; exit 1; }
	done
	step "make"
	(cd "$bld" && ../../Tools/wasm/wasi-env make -j"$(nproc)" >make.log 2>&1) || { tail -40 "$bld/make.log" >&2; exit 1; }
	echo "$stamp" >"$bld/.skillbox-stamp"
fi

# 4b. lxml's extension modules lxml.etree and lxml.objectify, from the generated C, as lxml's
#     setup.py would build them with --without-threading (no GIL release, no locks); embed.c
#     registers them as builtin modules. Its other Cython modules (builder, sax, _elementpath,
#     html.clean, html.diff) are plain Python too, and go into the standard library as such.
lx=$work/lxml
if [ ! -f "$lx/objectify.o" ] || [ "$(cat "$lx/.skillbox-stamp" 2>/dev/null)" != "$stamp" ]; then
	step "lxml"
	rm -rf "$lx"
	mkdir -p "$lx"
	for m in etree objectify; do
		/usr/bin/clang --target=wasm32-wasi "--sysroot=$sysroot" -O2 -w -DWITHOUT_THREADING -DCYTHON_CLINE_IN_TRACEBACK=0 \
			-I "$src/Include" -I "$bld" -I "$xml2/include/libxml2" -I "$xslt/include" -I "$lxsrc/src/lxml/includes" \
			-I "$lxsrc/src/lxml" -c "$lxsrc/src/lxml/$m.c" -o "$lx/$m.o"
	done
	echo "$stamp" >"$lx/.skillbox-stamp"
fi

# 4c. Pillow's extension modules PIL._imaging (with its libImaging), PIL._imagingmath and
#     PIL._imagingmorph, as its setup.py builds them when zlib and libjpeg are the libraries it
#     finds (HAVE_LIBZ: PNG, and ZIP in TIFF/PDF; HAVE_LIBJPEG: JPEG, and RGB images in PDF), with
#     the flags CPython builds its own modules with; into one archive, which embed.c's references
#     pull from. Pillow's other extensions need a library left out (_imagingft: freetype;
#     _imagingcms: lcms2; _webp) or Tk (_imagingtk).
#     Eight of its METH_NOARGS methods are defined with one parameter, not the two CPython calls
#     them with: harmless in native code, a trap (indirect call type mismatch) in WebAssembly,
#     so they get their second parameter, and a cast to an incompatible function type is an
#     error here (-Wcast-function-type finds these eight and nothing else). PIL.PdfParser imports
#     mmap, which WASI's CPython has not (and without it PDF is not even registered as a
#     format): it reads the file instead. Pillow's JPEG codec sets a jmp_buf before each call
#     into libjpeg, and its error_exit callback longjmps there to fail the call (an OSError):
#     WASI has no setjmp, so the setjmp is gone (as if it returned 0) and the callback prints
#     "libjpeg: <libjpeg's message>" on stderr and aborts, a trap that ends the run. That is for
#     fatal errors only (a corrupt marker segment, a failed allocation); libjpeg's warnings
#     (corrupt entropy data, a truncated file) return to Pillow as they would anywhere. The stamp
#     has this section's text: a change rebuilds.
pil=$work/pillow
pilstamp="$stamp $PILLOW_DEB_VERSION $JPEG_DEB_VERSION $(sed -n '/^# 4c\./,/^fi$/p' "$here/build.sh" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$pil/libpillow.a" ] || [ "$(cat "$pil/.skillbox-stamp" 2>/dev/null)" != "$pilstamp" ]; then
	step "pillow"
	rm -rf "$pil"
	mkdir -p "$pil"
	cp -a "$pilsrc/src" "$pil/src"
	sed -i 's/^\(_isblock\|_getbbox\|_getextrema\|_getprojection\|_split\|_getpalettemode\|_chop_invert\)(ImagingObject \*self) {$/\1(ImagingObject *self, PyObject *Py_UNUSED(ignored)) {/' \
		"$pil/src/_imaging.c"
	sed -i 's/^_encode_to_pyfd(ImagingEncoderObject \*encoder) {$/_encode_to_pyfd(ImagingEncoderObject *encoder, PyObject *Py_UNUSED(ignored)) {/' \
		"$pil/src/encode.c"
	sed -i -e 's/^import mmap$/try:\n    import mmap\nexcept ImportError:  # Skillbox: WASI has no mmap\n    mmap = None/' \
		-e 's/^\( *\)return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)$/\1return f.read() if mmap is None else mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)/' \
		"$pil/src/PIL/PdfParser.py"
	sed -i -e 's|^#include <setjmp.h>$|#include <stdio.h>\n#include <stdlib.h>\n\n/* Skillbox: WASI has no setjmp/longjmp: a fatal libjpeg error prints its message and traps. */\nstatic inline void\nskillbox_jpeg_fatal(j_common_ptr cinfo) {\n    char message[JMSG_LENGTH_MAX];\n    (*cinfo->err->format_message)(cinfo, message);\n    fprintf(stderr, "libjpeg: %s\\n", message);\n    fflush(stderr);\n    abort();\n}|' \
		-e 's|^    jmp_buf setjmp_buffer;     /\* for return to caller \*/$|    int setjmp_buffer; /* Skillbox: unused (no setjmp in WASI) */|' "$pil/src/libImaging/Jpeg.h"
	sed -i -e 's|^    if (setjmp(context->error.setjmp_buffer)) {$|    if (0) { /* Skillbox: no setjmp in WASI; error() does not return */|' \
		-e 's|^    longjmp(error->setjmp_buffer, 1);$|    (void)error;\n    skillbox_jpeg_fatal(cinfo);|' \
		-e '/^    (\*cinfo->err->output_message)(cinfo);$/d' "$pil/src/libImaging/JpegDecode.c" "$pil/src/libImaging/JpegEncode.c"
	[ "$(cat "$pil/src/_imaging.c" "$pil/src/encode.c" | grep -c 'Py_UNUSED(ignored)) {$')" = 8 ] &&
		[ "$(grep -c 'mmap is None\|mmap = None' "$pil/src/PIL/PdfParser.py")" = 2 ] &&
		[ "$(cat "$pil"/src/libImaging/Jpeg{.h,Decode.c,Encode.c} | grep -c 'skillbox_jpeg_fatal(cinfo\|if (0) { /\* Skillbox\|int setjmp_buffer;')" = 5 ] &&
		! grep -rn 'setjmp(\|longjmp(\|jmp_buf \|<setjmp.h>\|output_message)(' "$pil/src" --include='*.[ch]' || { echo "build.sh: the Pillow patch did not apply" >&2; exit 1; }
	pilc=("$pil"/src/{_imaging,decode,encode,map,display,outline,path,_imagingmath,_imagingmorph}.c)
	mapfile -t libimaging < <(sed -n '/^_LIB_IMAGING = (/,/^)/s/^ *"\([A-Za-z0-9_]*\)",$/\1/p' "$pilsrc/setup.py")
	[ "${#libimaging[@]}" -gt 60 ] || { echo "build.sh: Pillow's setup.py no longer lists _LIB_IMAGING as expected" >&2; exit 1; }
	for f in "${libimaging[@]}"; do pilc+=("$pil/src/libImaging/$f.c"); done
	for f in "${pilc[@]}"; do
		/usr/bin/clang --target=wasm32-wasi "--sysroot=$sysroot" -O2 -DNDEBUG -fwrapv -Werror=cast-function-type \
			-DHAVE_LIBZ -DHAVE_LIBJPEG '-DPILLOW_VERSION="'"${PILLOW_SRC_DIR#pillow-}"'"' -I "$src/Include" -I "$bld" -I "$zlib" -I "$jpeg" \
			-c "$f" -o "$pil/$(basename "$f" .c).o"
	done
	llvm-ar rcs "$pil/libpillow.a" "$pil"/*.o
	echo "$pilstamp" >"$pil/.skillbox-stamp"
fi

# 5. The embedding: embed.c linked against libpython, a 512 KiB stack placed first (so that a
#    C stack overflow traps on the first out-of-bounds access instead of overwriting data).
step "link embed.c"
emb=$work/embed
rm -rf "$emb"
mkdir -p "$emb"
cc=(/usr/bin/clang --target=wasm32-wasi "--sysroot=$sysroot")
"${cc[@]}" -O2 -Wall -Werror -I "$src/Include" -I "$bld" -c "$here/embed.c" -o "$emb/embed.o"
"${cc[@]}" -z stack-size=524288 -Wl,--stack-first -Wl,--wrap=__wasi_random_get -Wl,--wrap=__wasi_clock_time_get \
	-Wl,--wrap=__wasi_path_filestat_get -Wl,--wrap=__wasi_fd_filestat_get -Wl,--wrap=__wasi_fd_readdir \
	-o "$emb/python.wasm" "$emb/embed.o" \
	"$lx/etree.o" "$lx/objectify.o" "$xslt/lib/libexslt.a" "$xslt/lib/libxslt.a" "$xml2/lib/libxml2.a" "$pil/libpillow.a" "$jpeg/libjpeg.a" \
	"$bld/libpython3.11.a" "$bld/Modules/_decimal/libmpdec/libmpdec.a" "$bld/Modules/expat/libexpat.a" "$zlib/libz.a" \
	"$bz2/libbz2.a" "$xz/lib/liblzma.a" "$sq/libsqlite3.a" \
	-lwasi-emulated-signal -lwasi-emulated-getpid -lwasi-emulated-process-clocks -lm
llvm-strip "$emb/python.wasm"

# 6. The standard library: .pyc only (unchecked-hash: no source mtimes to compare), laid out as
#    the guest sees it, as a directory for Wizer and as a zip for the runner. lxml's package
#    goes in without lxml.isoschematron: two of its XSLT resources state no licence; Pillow's
#    (PIL) whole, though its modules for Tk, Qt and Windows (ImageTk, ImageQt, ImageWin,
#    ImageGrab) find nothing to work with here.
step "stdlib"
sysconfigdata=$(ls "$bld"/build/lib.wasi-wasm32-3.11/_sysconfigdata_*.py)
"$BUILD_PYTHON" "$here/mkstdlib.py" --lib "$src/Lib" --exclude "$here/stdlib-exclude.txt" \
	--extra "$here/skillbox.py" --extra "$here/skillbox_subprocess.py" --extra "$sysconfigdata" --package "$lxsrc/src/lxml" --package-skip isoschematron --package "$pil/src/PIL" --guest "$GUEST_STDLIB" \
	--dir "$emb/stdlib" --zip "$emb/stdlib.zip"

# 7. The snapshot: Wizer runs wizer.initialize (Py_Initialize, the pre-imports) and writes the
#    initialised memory back as data segments. While it runs, the clock, the random source and
#    the files' times and inode numbers are fixed (embed.c), and so is the hash seed: two builds of
#    the same inputs then make interpreters that behave the same (the same hashes, and so the same
#    order of every set) and differ in about a dozen bytes, left in memory the initialisation
#    freed (they differed in thousands, the hash secret among them).
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
