#!/usr/bin/env bash
# Installs TinyGo for building Skillbox skills (`skillbox build` of a go.mod marked
# `// skillbox:build tinygo`, examples/wasm/tinygo/build.sh).
#
# There is no TinyGo package for Debian and no prebuilt download reachable here, so this builds it
# from source: the source comes from the Go module proxy at a pinned version and is compiled
# against Debian 12's LLVM 19 (`go build -tags llvm19`). Idempotent: when the pinned version is
# already installed it only checks it and prints `tinygo version`.
#
#   scripts/install-tinygo.sh            # as root: /usr/local/lib/tinygo, /usr/local/bin/tinygo
#   TINYGO_PREFIX=~/tg TINYGO_BINDIR=~/bin scripts/install-tinygo.sh
#
# Environment:
#   TINYGO_PREFIX  where TinyGo's tree goes (TINYGOROOT). Default /usr/local/lib/tinygo when that
#                  is writable (root), else $HOME/.cache/skillbox/tinygo.
#   TINYGO_BINDIR  where the `tinygo` symlink goes. Default /usr/local/bin, or $HOME/.local/bin.
#   TINYGO_FORCE=1 rebuild even if the pinned version is installed.
#
# What it installs and why:
#   - TinyGo v0.41.1. It accepts Go 1.19 through 1.26 (the machines have Go 1.26), supports LLVM 19
#     and `//go:wasmexport`, and its dependencies are all served by the module proxy. v0.42.0 needs
#     Go >= 1.25 and depends on tinygo.org/x/espflasher v0.8.1, which the proxy refuses; v0.40.1
#     rejects Go 1.26.
#   - The module zip lacks TinyGo's git submodules. Only three matter for -target=wasip1:
#     src/net (an empty directory is enough for programs that do not import net), and
#     lib/wasi-libc and lib/compiler-rt-builtins, the sources of the two C libraries TinyGo would
#     build on first use. Instead, $PREFIX/pkg holds Debian's builds of them (wasi-libc,
#     libclang-rt-19-dev-wasm32), which the `tinygo` wrapper links into TinyGo's library cache
#     ($XDG_CACHE_HOME/tinygo, per user) before every run, so a fresh user or `tinygo clean` works.
#   - $PREFIX/bin/tinygo is that wrapper; the compiler is $PREFIX/bin/tinygo.real. The wrapper
#     also sets TINYGOROOT, and when the `go` on PATH is newer than TinyGo accepts (and GOTOOLCHAIN
#     is unset) it runs TinyGo with GOTOOLCHAIN set to the Go it was built with.
#   - targets/*.json name two wasm features that only LLVM 20 knows (bulk-memory-opt,
#     call-indirect-overlong); LLVM 19 ignores them with a warning on every build. They are removed
#     here: LLVM 19 generates the same code either way (checked: byte-identical output).
# Only -target=wasip1 is supported by this install (no wasm-unknown, wasip2, microcontrollers, or
# -gc=boehm, whose C sources are in submodules the module zip does not carry).
set -euo pipefail

TINYGO_VERSION=0.41.1
# The Go TinyGo accepts (1.19-1.26) and needs to be built with (go.mod: go 1.23.0).
GO_MIN_MINOR=23
GO_MAX_MINOR=26
GO_FALLBACK=go1.26.8 # used through GOTOOLCHAIN when the go on PATH is outside that range
LLVM=19
APT_PACKAGES=(llvm-19-dev libclang-19-dev clang-19 lld-19 libclang-rt-19-dev-wasm32
	binaryen wasi-libc gcc g++ libc6-dev)

if [[ -z "${TINYGO_PREFIX:-}" ]]; then
	if [[ -w /usr/local/lib && -w /usr/local/bin ]]; then
		TINYGO_PREFIX=/usr/local/lib/tinygo
		: "${TINYGO_BINDIR:=/usr/local/bin}"
	else
		TINYGO_PREFIX=$HOME/.cache/skillbox/tinygo
	fi
fi
: "${TINYGO_BINDIR:=$HOME/.local/bin}"
PREFIX=$(realpath -m "$TINYGO_PREFIX")
BINDIR=$(realpath -m "$TINYGO_BINDIR")
STAMP="tinygo $TINYGO_VERSION llvm$LLVM"

start=$(date +%s.%N)
last=$start
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }
step() {
	echo "install-tinygo: $* ($(elapsed "$last"))"
	last=$(date +%s.%N)
}
die() {
	echo "install-tinygo: $*" >&2
	exit 1
}

finish() {
	echo "install-tinygo: $BINDIR/tinygo -> $PREFIX/bin/tinygo"
	case ":$PATH:" in *":$BINDIR:"*) ;; *) echo "install-tinygo: note: $BINDIR is not on PATH" ;; esac
	"$PREFIX/bin/tinygo" version
	echo "install-tinygo: done in $(elapsed "$start")"
}

# --- 1. Debian packages: LLVM 19 to link against, clang/wasm-ld/wasm-opt that TinyGo runs, the
# prebuilt wasm32 libc and compiler-rt, and a C/C++ compiler for cgo.
missing=()
for p in "${APT_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	sudo=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null || die "need root (or sudo) to apt-get install ${missing[*]}"
		sudo=(sudo)
	fi
	echo "install-tinygo: apt-get install ${missing[*]}"
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	step "apt packages installed"
fi

# --- 2. Already installed?
if [[ -z "${TINYGO_FORCE:-}" && -x "$PREFIX/bin/tinygo.real" && "$(cat "$PREFIX/.skillbox-install" 2>/dev/null)" == "$STAMP" ]]; then
	mkdir -p "$BINDIR"
	ln -sfn "$PREFIX/bin/tinygo" "$BINDIR/tinygo"
	echo "install-tinygo: TinyGo $TINYGO_VERSION is already installed in $PREFIX"
	finish
	exit 0
fi

# --- 3. A Go toolchain that can build this TinyGo and that it accepts at run time.
command -v go >/dev/null || die "Go is needed (Go 1.21 or later on PATH; the machines have /usr/local/go)"
if [[ -e "$PREFIX" && ! -e "$PREFIX/.skillbox-install" ]]; then
	die "$PREFIX exists and is not a TinyGo installed by this script; remove it or set TINYGO_PREFIX"
fi
work=$(mktemp -d)
stage="$PREFIX.new.$$"
trap 'rm -rf "$work" "$stage"' EXIT
cd "$work" # outside any Go module, so no go.mod's go or toolchain line applies
gover=$(GOTOOLCHAIN=local go env GOVERSION)
minor=$(sed -E 's/^go1\.([0-9]+).*/\1/' <<<"$gover")
[[ "$minor" =~ ^[0-9]+$ ]] || die "cannot parse the Go version $gover"
if ((minor < GO_MIN_MINOR || minor > GO_MAX_MINOR)); then
	((minor >= 21)) || die "$gover is too old to fetch another Go toolchain; install Go 1.21 or later"
	export GOTOOLCHAIN=$GO_FALLBACK
	echo "install-tinygo: $gover is outside go1.$GO_MIN_MINOR..go1.$GO_MAX_MINOR; building with GOTOOLCHAIN=$GOTOOLCHAIN"
else
	export GOTOOLCHAIN=local
fi
gover=$(go env GOVERSION)
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

# --- 4. The source, from the module proxy (run outside any module).
json=$(go mod download -json "github.com/tinygo-org/tinygo@v$TINYGO_VERSION") ||
	die "go mod download github.com/tinygo-org/tinygo@v$TINYGO_VERSION failed: $json"
dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")
[[ -d "$dir" ]] || die "no source directory in: $json"
cp -R "$dir" "$work/tinygo"
chmod -R u+w "$work/tinygo"
src=$work/tinygo
mkdir -p "$src/src/net" # git submodule, not in the module zip
step "source of TinyGo $TINYGO_VERSION from the module proxy"

# --- 5. Build.
(cd "$src" && go build -tags "llvm$LLVM" -ldflags "-s -w" -o "$work/tinygo.real" .)
step "built with $gover against LLVM $LLVM"

# --- 6. Lay out the tree: bin/, src/, targets/, lib/, and pkg/ with Debian's libraries.
mkdir -p "$stage/bin"
cp "$work/tinygo.real" "$stage/bin/tinygo.real"
cp -R "$src/src" "$src/targets" "$src/lib" "$stage/"
cp "$src/LICENSE" "$stage/"
sed -i -e 's/+bulk-memory-opt,//g; s/+call-indirect-overlong,//g' "$stage"/targets/*.json

# TinyGo's library cache names: <library>-<llvm triple>-<cpu>, with lib.a and include/.
libc=$stage/pkg/wasi-libc-wasm32-unknown-wasi-generic
rt=$stage/pkg/compiler-rt-wasm32-unknown-wasi-generic
mkdir -p "$libc" "$rt"
cp /usr/lib/wasm32-wasi/libc.a "$libc/lib.a"
cp -R /usr/include/wasm32-wasi "$libc/include"
cp "/usr/lib/llvm-$LLVM/lib/clang/$LLVM/lib/wasi/libclang_rt.builtins-wasm32.a" "$rt/lib.a"

cat >"$stage/bin/tinygo" <<EOF
#!/usr/bin/env bash
# TinyGo $TINYGO_VERSION, installed by Skillbox's scripts/install-tinygo.sh. Runs tinygo.real with its
# root, with Debian's wasm32 libc and compiler-rt in TinyGo's library cache, and with a Go
# toolchain TinyGo accepts.
set -euo pipefail
root=\$(cd "\$(dirname "\$(readlink -f "\${BASH_SOURCE[0]}")")/.." && pwd)
export TINYGOROOT=\$root
cache=\${XDG_CACHE_HOME:-\$HOME/.cache}/tinygo
for lib in "\$root"/pkg/*; do
	name=\${lib##*/}
	if [[ ! -e "\$cache/\$name/lib.a" ]]; then
		mkdir -p "\$cache"
		rm -rf "\$cache/\$name"
		ln -sfn "\$lib" "\$cache/\$name"
	fi
done
if [[ -z "\${GOTOOLCHAIN:-}" ]]; then
	v=\$(go env GOVERSION 2>/dev/null || true)
	m=\${v#go1.}
	m=\${m%%.*}
	if [[ "\$m" =~ ^[0-9]+\$ ]] && ((m < 19 || m > $GO_MAX_MINOR)); then
		export GOTOOLCHAIN=$gover
	fi
fi
exec "\$root/bin/tinygo.real" "\$@"
EOF
chmod 755 "$stage/bin/tinygo"
echo "$STAMP" >"$stage/.skillbox-install"
step "laid out in $stage"

# --- 7. Check it builds a reactor before it replaces anything.
mkdir -p "$work/smoke"
cat >"$work/smoke/go.mod" <<'EOF'
module smoke

go 1.24
EOF
cat >"$work/smoke/main.go" <<'EOF'
package main

import "encoding/json"

//go:wasmexport execute
func execute() int32 {
	b, _ := json.Marshal(map[string]string{"ok": "yes"})
	return int32(len(b))
}

func main() {}
EOF
(cd "$work/smoke" && XDG_CACHE_HOME=$work/cache "$stage/bin/tinygo" build -target=wasip1 -buildmode=c-shared -o smoke.wasm .) ||
	die "the new TinyGo could not build a test module"
step "test build of a wasip1 reactor"

# --- 8. Into place.
rm -rf "$PREFIX"
mkdir -p "$(dirname "$PREFIX")" "$BINDIR"
mv "$stage" "$PREFIX"
ln -sfn "$PREFIX/bin/tinygo" "$BINDIR/tinygo"
finish
