#!/usr/bin/env bash
# measure-registry.sh [N]: how skillbox scales with N skills (default 10,000) against 10, with the
# built binary: `list` (hyperfine when installed, else a loop of /usr/bin/time), `run` of one
# skill, and `serve`'s resident memory once idle (every skill checked). The skill directories and
# a private XDG_CACHE_HOME live under one temporary directory, removed at the end.
set -euo pipefail
n=${1:-10000}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/skillbox-measure-XXXXXX)
trap 'rm -rf "$work"' EXIT
bin="$work/skillbox"
(cd "$here" && go build -o "$bin" ./cmd/skillbox)
bash "$here/scripts/genskills.sh" "$n" "$work/many"
bash "$here/scripts/genskills.sh" 10 "$work/few"
export XDG_CACHE_HOME="$work/cache"

timeit() { # name, command...
	if command -v hyperfine >/dev/null; then
		hyperfine -N -w 2 -r 10 -n "$1" "${*:2}" 2>/dev/null | grep -E 'Time|Range'
	else
		for _ in 1 2 3 4 5; do /usr/bin/time -f "$1 %e s %M KiB" "${@:2}" >/dev/null; done
	fi
}

rss() { # skills dir: start serve, wait until it listens and no skill is unchecked, print VmRSS
	local log="$work/serve.log" pid addr u=""
	"$bin" serve --skills "$1" --addr 127.0.0.1:0 2>"$log" &
	pid=$!
	for _ in $(seq 600); do grep -q serving "$log" && break; sleep 0.1; done
	addr=$(grep -o '127.0.0.1:[0-9]*' "$log")
	for _ in $(seq 600); do
		u=$(curl -s "http://$addr/metrics" | awk '/^skillbox_skills\{status="unchecked"\}/ {print $2}')
		[ "$u" = 0 ] && break
		sleep 0.2
	done
	sleep 5 # idle
	echo "serve $(basename "$1"): unchecked=$u $(grep VmRSS /proc/$pid/status)"
	kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "== list, $n skills, no index yet (every skill unchecked)"
timeit "list-$n-cold" "$bin" list --skills "$work/many"
rss "$work/many" # checks every skill in the background and writes the index
echo "== list, $n skills, with the index serve left"
timeit "list-$n-indexed" "$bin" list --skills "$work/many"
rss "$work/many" # again, every verdict known from the index
echo "== run one skill among $n, and among 10"
timeit "run-among-$n" "$bin" run skill-00000 --skills "$work/many"
timeit "run-among-10" "$bin" run skill-00000 --skills "$work/few"
