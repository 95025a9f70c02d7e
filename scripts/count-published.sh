#!/usr/bin/env bash
# Counts how many of the Python programs of a checkout of published skills (such as
# github.com/anthropics/skills) start in Skillbox's sandbox as published: each program (a .py
# file with a __main__ block, not a package's __init__.py) is run with --help by
# `skillbox script`, and counts when it exits 0. It prints one line per program, why each
# failed (the last line of its error), the modules most often missing, and the count.
#
#   scripts/count-published.sh CHECKOUT [SKILLBOX]
#
# CHECKOUT is the repository's root (its skills are in CHECKOUT/skills, or CHECKOUT itself);
# SKILLBOX the binary (default: built from this tree into a temporary directory). Nothing of the
# checkout is written or copied. Run by hand: the repository is not reachable from CI, and parts
# of it are not openly licensed.
set -euo pipefail

checkout=${1:?usage: count-published.sh CHECKOUT [SKILLBOX]}
skills=$checkout/skills
[ -d "$skills" ] || skills=$checkout
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sb=${2:-}
if [ -z "$sb" ]; then
	(cd "$here" && go build -o "$work/skillbox" ./cmd/skillbox)
	sb=$work/skillbox
fi

total=0 ok=0
: >"$work/missing"
while IFS= read -r prog; do
	rel=${prog#"$skills"/}
	skill=${rel%%/*}
	path=${rel#*/}
	total=$((total + 1))
	if timeout 120 "$sb" --skills "$skills" script "$skill" "$path" --no-store -- --help >"$work/out" 2>"$work/err"; then
		ok=$((ok + 1))
		printf 'ok    %s/%s\n' "$skill" "$path"
	else
		why=$( (grep -v '^\s*$' "$work/err" || echo "(exit $?, nothing on stderr)") | tail -1 | cut -c1-160)
		printf 'fail  %s/%s: %s\n' "$skill" "$path" "$why"
		sed -n "s/.*No module named '\([^'.]*\).*/\1/p; s/.*module '\([^'.]*\)' is not.*/\1/p" "$work/err" | head -1 >>"$work/missing" || true
	fi
done < <(find "$skills" -name '*.py' -not -name '__init__.py' -not -path '*/.*' -print0 |
	xargs -0 grep -l "__name__ *== *['\"]__main__['\"]" | sort)

echo
echo "modules missing, by programs that stopped at them:"
sort "$work/missing" | uniq -c | sort -rn | sed 's/^/  /'
echo
echo "$ok of $total programs exit 0 on --help ($(( total > 0 ? 100 * ok / total : 0 ))%)"
