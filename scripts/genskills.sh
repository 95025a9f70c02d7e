#!/usr/bin/env bash
# genskills.sh N DIR: writes N executable skills (skill-00000 ... ) into DIR, each a minimal
# skill.json beside a copy of testdata/wasm/hello.wasm (264 bytes), for measuring how the
# registry scales: `skillbox list`, a run among N skills, `serve`'s idle memory. See
# docs/performance.md for the figures and the commands that produce them.
set -euo pipefail
n=${1:?usage: genskills.sh N DIR}
dir=${2:?usage: genskills.sh N DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
module="$here/testdata/wasm/hello.wasm"
mkdir -p "$dir"
for ((i = 0; i < n; i++)); do
	id=$(printf 'skill-%05d' "$i")
	mkdir -p "$dir/$id"
	printf '{"id":"%s","name":"%s","description":"Says hello (skill %d of %d)"}\n' "$id" "$id" "$i" "$n" >"$dir/$id/skill.json"
	cp "$module" "$dir/$id/execute.wasm"
done
