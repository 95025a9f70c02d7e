#!/usr/bin/env bash
# Counts how many of the Python programs of a checkout of published skills (such as
# github.com/anthropics/skills) work in Skillbox's sandbox. Two measures:
#
#   scripts/count-published.sh CHECKOUT [SKILLBOX]
#       each program (a .py file with a __main__ block) is run with --help and counts when it
#       exits 0: whether it starts, as published.
#
#   scripts/count-published.sh --uses [--wheels DIR] [--python PY] [--keep DIR] CHECKOUT [SKILLBOX]
#       each program's documented use, as its skill's instructions give it
#       (scripts/published/uses.txt), is run in order on inputs that
#       scripts/published/fixtures.mjs writes (node and npm needed), with /workspace granted
#       read-write; a program counts when all its uses exit 0 and leave the file they are meant
#       to. Programs that run another program (LibreOffice, a browser, the claude CLI) are left
#       out of the denominator, each with why. With --wheels, the skills declare the pure-Python
#       packages their programs import (scripts/published/requirements.txt) and `skillbox
#       vendor --find-links DIR` vendors them first; scripts/published/wheels.sh builds DIR.
#       With --python, the same uses run in the host's CPython PY instead (the vendored lib/ on
#       its PYTHONPATH), the baseline: a use that fails there fails for its own reasons.
#       --keep DIR keeps /workspace, with what the programs wrote, in DIR.
#
# It prints one line per program (or use), why each failed (the last line of its error), and the
# count. SKILLBOX is the binary (default: built from this tree into a temporary directory).
# Nothing of the checkout is written: --uses works on a copy. Run by hand: the repository is not
# reachable from CI, and parts of it are not openly licensed.
set -euo pipefail

uses=0 wheels="" python="" keep=""
while [ $# -gt 0 ]; do
	case $1 in
	--uses) uses=1; shift ;;
	--wheels) wheels=$(cd "${2:?--wheels DIR}" && pwd); shift 2 ;;
	--python) python=${2:?--python PY}; shift 2 ;;
	--keep) keep=${2:?--keep DIR}; shift 2 ;;
	*) break ;;
	esac
done
checkout=${1:?usage: count-published.sh [--uses [--wheels DIR] [--python PY] [--keep DIR]] CHECKOUT [SKILLBOX]}
skills=$checkout/skills
[ -d "$skills" ] || skills=$checkout
skills=$(cd "$skills" && pwd)
[ -z "$keep" ] || [ ! -e "$keep" ] || { echo "count-published.sh: --keep $keep exists: name a new directory" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sb=${2:-}
if [ -z "$sb" ]; then
	(cd "$here" && go build -o "$work/skillbox" ./cmd/skillbox)
	sb=$work/skillbox
fi

# programs lists the .py files with a __main__ block under $1, as SKILL/PATH.
programs() {
	find "$1" -name '*.py' -not -name '__init__.py' -not -path '*/.*' -not -path '*/lib/*' -print0 |
		xargs -0 grep -l "__name__ *== *['\"]__main__['\"]" | sed "s|^$1/||" | sort
}

# why prints the last non-blank line of stderr ($1), else of stdout ($2), else the exit code ($3).
why() { (grep -hv '^\s*$' "$1" || grep -hv '^\s*$' "$2" || echo "(exit $3, no output)") | tail -1 | cut -c1-160; }

if [ $uses = 0 ]; then
	total=0 ok=0
	: >"$work/missing"
	while IFS= read -r rel; do
		skill=${rel%%/*} path=${rel#*/}
		total=$((total + 1))
		if timeout 120 "$sb" --skills "$skills" script "$skill" "$path" --no-store -- --help >"$work/out" 2>"$work/err"; then
			ok=$((ok + 1))
			printf 'ok    %s\n' "$rel"
		else
			printf 'fail  %s: %s\n' "$rel" "$(why "$work/err" "$work/out" $?)"
			sed -n "s/.*No module named '\([^'.]*\).*/\1/p; s/.*module '\([^'.]*\)' is not.*/\1/p" "$work/err" | head -1 >>"$work/missing" || true
		fi
	done < <(programs "$skills")
	echo
	echo "modules missing, by programs that stopped at them:"
	sort "$work/missing" | uniq -c | sort -rn | sed 's/^/  /'
	echo
	echo "$ok of $total programs exit 0 on --help ($(( total > 0 ? 100 * ok / total : 0 ))%)"
	exit 0
fi

pub=$here/scripts/published
mkdir -p "$work/skills" "$work/fx"
cp -R "$skills"/. "$work/skills"
skills=$work/skills
if [ -n "$wheels" ]; then
	echo "vendoring what the skills' programs import (scripts/published/requirements.txt):"
	grep -v '^\s*\(#\|$\)' "$pub/requirements.txt" | while read -r skill req; do
		echo "$req" >>"$skills/$skill/requirements.txt"
	done
	for skill in $(grep -v '^\s*\(#\|$\)' "$pub/requirements.txt" | cut -d' ' -f1 | sort -u); do
		"$sb" vendor "$skills/$skill" --find-links "$wheels" 2>&1 | sed "s|^|  $skill: |"
	done
	echo
fi
cp "$pub/package.json" "$pub/package-lock.json" "$pub/fixtures.mjs" "$work/fx/"
(cd "$work/fx" && npm ci --no-audit --no-fund --silent && node fixtures.mjs "$work/ws")
{
	printf 'files:\n  - {path: /workspace, hostPath: %s, access: read-write}\n' "$work/ws"
	printf 'limits: {timeoutMs: 300000, memoryMiB: 512}\nscripts:\n'
	for d in "$skills"/*/; do
		printf '  %s: {files: [{path: /workspace, access: read-write}]}\n' "$(basename "$d")"
	done
} >"$work/policy.yaml"

# run runs program $2 of skill $1 with the arguments after them, in /workspace.
run() {
	local skill=$1 path=$2
	shift 2
	if [ -n "$python" ]; then
		(cd "$work/ws" && PYTHONPATH="$skills/$skill/lib:$skills/$skill" timeout 600 "$python" "$skills/$skill/$path" "$@")
	else
		timeout 600 "$sb" --skills "$skills" --policy "$work/policy.yaml" script "$skill" "$path" --no-store -- "$@"
	fi
}

echo "the documented uses, run by ${python:-Skillbox}:"
: >"$work/failed" ; : >"$work/used" ; : >"$work/left"
while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	if [ "${line#- }" != "$line" ]; then
		echo "${line#- }" >>"$work/left"
		continue
	fi
	want="" cmd=$line
	if [ "${line#*=> }" != "$line" ]; then want=${line##*=> } cmd=${line% =>*}; fi
	eval "set -- $cmd"
	skill=$1 path=$2
	shift 2
	echo "$skill/$path" >>"$work/used"
	if run "$skill" "$path" "$@" >"$work/out" 2>"$work/err"; then
		if [ -z "$want" ] || [ -e "$work/ws/$want" ]; then
			printf 'ok    %s\n' "$cmd"
			continue
		fi
		printf 'fail  %s: left no %s\n' "$cmd" "$want"
	else
		printf 'fail  %s: %s\n' "$cmd" "$(why "$work/err" "$work/out" $?)"
	fi
	echo "$skill/$path" >>"$work/failed"
done <"$pub/uses.txt"

[ -z "$keep" ] || cp -R "$work/ws" "$keep"
echo
total=0 ok=0
while IFS= read -r prog; do
	total=$((total + 1))
	grep -qxF "$prog" "$work/failed" || ok=$((ok + 1))
done < <(sort -u "$work/used")
echo "left out of the denominator:"
sed 's/^/  /' "$work/left"
unlisted=0
while IFS= read -r prog; do
	grep -qxF "$prog" "$work/used" && continue
	listed=0
	while IFS= read -r l; do
		# shellcheck disable=SC2053 # the left-out entry is a pattern
		[[ $prog == ${l%%:*} ]] && listed=1 && break
	done < <(sed 's/ /\//' "$work/left")
	[ $listed = 1 ] && continue
	unlisted=$((unlisted + 1))
	echo "not in uses.txt: $prog"
done < <(programs "$skills")
echo
echo "$ok of $total programs do their documented use in ${python:-Skillbox} ($(( total > 0 ? 100 * ok / total : 0 ))%)"
[ $unlisted = 0 ] || { echo "$unlisted programs are neither a use nor left out in scripts/published/uses.txt" >&2; exit 1; }
