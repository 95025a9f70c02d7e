#!/usr/bin/env bash
# Builds, offline from Debian's source tarballs, the pure-Python wheels that the published
# skills' programs import, for `skillbox vendor --find-links DIR`: no public package index is
# reachable from the machines this runs on. Each tarball is pinned by its sha256, and a wheel is
# the package's directory as upstream ships it, with the metadata pip needs.
#
#   scripts/published/wheels.sh DIR
set -euo pipefail
out=${1:?usage: wheels.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
pool=http://deb.debian.org/debian/pool/main
# name version tarball sha256 package-directory-in-tarball
while read -r name version url sha dir; do
	f=$src/${url##*/}
	curl -fsSL -o "$f" "$pool/$url"
	echo "$sha  $f" | sha256sum -c --quiet - || { echo "wheels.sh: $url is not the pinned tarball" >&2; exit 1; }
	tar -xf "$f" -C "$src"
	python3 "$here/mkwheel.py" "$name" "$version" "$src/$dir" "$out"
done <<'LIST'
defusedxml 0.7.1 d/defusedxml/defusedxml_0.7.1.orig.tar.gz 93cdbc6c5c9d3dc08991a9804253933491a5a7f3c2d8583e54337e5469c73849 defusedxml-0.7.1/defusedxml
pypdf 5.4.0 p/pypdf/pypdf_5.4.0.orig.tar.xz d4bb20b2254aa4c19a94887fc6276af18c19515a302550acf0c9727d38a5d024 pypdf-5.4.0/pypdf
PyYAML 6.0.2 p/pyyaml/pyyaml_6.0.2.orig.tar.gz d584d9ec91ad65861cc08d42e834324ef890a082e591037abe114850ff7bbc3e pyyaml-6.0.2/lib/yaml
LIST
