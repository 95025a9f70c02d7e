package jsdeps

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles puts files (by slash path) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// nodeModules is what npm would have installed: a CommonJS package and a scoped ES module
// package that imports it.
var nodeModules = map[string]string{
	"node_modules/left-pad/package.json":    `{"name": "left-pad", "version": "1.3.0", "main": "index.js"}`,
	"node_modules/left-pad/index.js":        "module.exports = function (s, n, c) { s = String(s); while (s.length < n) s = (c || ' ') + s; return s; };\n",
	"node_modules/@acme/greet/package.json": `{"name": "@acme/greet", "version": "2.0.0", "module": "esm.js"}`,
	"node_modules/@acme/greet/esm.js":       "import pad from 'left-pad';\nexport function greet(who) { return 'hello ' + pad(who, 5, '*'); }\n",
	"node_modules/uses-fs/package.json":     `{"name": "uses-fs", "version": "1.0.0", "main": "index.js"}`,
	"node_modules/uses-fs/index.js":         "const fs = require('fs');\nmodule.exports = () => fs.readFileSync('/etc/passwd');\n",
}

// Each pinned dependency is bundled from node_modules into one module in lib/, with its own
// dependencies inside it; the next vendoring replaces the last one's bundles.
func TestVendorBundlesFromNodeModules(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, nodeModules)
	writeFiles(t, dir, map[string]string{"package.json": `{"name": "s", "dependencies": {"@acme/greet": "2.0.0", "left-pad": "1.3.0"}}`})
	m, err := Vendor(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Bundles) != 2 || m.Bundles[0].File != "@acme/greet.js" || m.Bundles[1].Version != "1.3.0" {
		t.Fatalf("%+v", m)
	}
	greet, err := os.ReadFile(filepath.Join(dir, "lib", "@acme", "greet.js"))
	if err != nil || !strings.Contains(string(greet), "s.length < n") {
		t.Errorf("lib/@acme/greet.js does not hold greet and left-pad:\n%s %v", greet, err)
	}
	writeFiles(t, dir, map[string]string{"package.json": `{"dependencies": {"left-pad": "1.3.0"}}`})
	if _, err := Vendor(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", "@acme", "greet.js")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the first vendoring's bundle is left: %v", err)
	}
}

// What cannot be vendored is refused naming it, and lib/ is not written.
func TestVendorRefusals(t *testing.T) {
	for deps, want := range map[string]string{
		`{"left-pad": "^1.3.0"}`: `dependencies.left-pad: "^1.3.0" is not one version`,
		`{"../x": "1.0.0"}`:      "is not an npm package name",
		`{"left-pad": "1.2.0"}`:  "node_modules has left-pad@1.3.0, and package.json pins 1.2.0",
		`{"absent": "1.0.0"}`:    "run npm ci",
		`{"uses-fs": "1.0.0"}`:   `imports "fs"`,
	} {
		dir := t.TempDir()
		writeFiles(t, dir, nodeModules)
		writeFiles(t, dir, map[string]string{"package.json": `{"dependencies": ` + deps + `}`})
		_, err := Vendor(context.Background(), dir)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", deps, err, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "lib")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: lib/ was written", deps)
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, nodeModules)
	writeFiles(t, dir, map[string]string{"package.json": `{"dependencies": {"left-pad": "1.3.0"}}`, "lib/left-pad.js": "mine"})
	if _, err := Vendor(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "lib/left-pad.js, which exists") {
		t.Errorf("over the skill's own file: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "lib", "left-pad.js")); string(data) != "mine" {
		t.Errorf("lib/left-pad.js is now %q", data)
	}
}

// A path inside a declared dependency that the skill's code imports is bundled as a module of
// its own, through the package's "exports"; paths inside undeclared packages, paths with ".."
// in them, relative imports and built-ins are left to the sandbox's bundler to judge.
func TestVendorBundlesSubpathImports(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, nodeModules)
	writeFiles(t, dir, map[string]string{
		"node_modules/@acme/greet/package.json": `{"name": "@acme/greet", "version": "2.0.0", "module": "esm.js", "exports": {".": "./esm.js", "./shout": "./shout.js"}}`,
		"node_modules/@acme/greet/shout.js":     "import { greet } from './esm.js';\nexport const shout = (who) => greet(who).toUpperCase();\n",
		"package.json":                          `{"dependencies": {"@acme/greet": "2.0.0", "left-pad": "1.3.0"}}`,
		"execute.ts":                            "import { shout } from '@acme/greet/shout';\nimport './util';\nexport function execute(a: {who: string}) { return shout(a.who); }\n",
		"util.ts":                               "export const x = 1;\n",
		"scripts/pad.mjs":                       "import pad from 'left-pad/index.js';\nimport other from 'other/sub';\nimport up from 'left-pad/../../up';\nconsole.log(pad('a', 3));\n",
		"node_modules/ignored/x.js":             "import y from 'left-pad/nope';\n",
		"lib/old.js":                            "import z from 'left-pad/nope';\n",
	})
	m, err := Vendor(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, b := range m.Bundles {
		files = append(files, b.Name+"="+b.File+"@"+b.Version)
	}
	want := "@acme/greet=@acme/greet.js@2.0.0 left-pad=left-pad.js@1.3.0 @acme/greet/shout=@acme/greet/shout.js@2.0.0 left-pad/index.js=left-pad/index.js@1.3.0"
	if got := strings.Join(files, " "); got != want {
		t.Fatalf("bundles %s\nwant    %s", got, want)
	}
	shout, err := os.ReadFile(filepath.Join(dir, "lib", "@acme", "greet", "shout.js"))
	if err != nil || !strings.Contains(string(shout), "toUpperCase") || !strings.Contains(string(shout), "s.length < n") {
		t.Errorf("lib/@acme/greet/shout.js does not hold shout, greet and left-pad:\n%s %v", shout, err)
	}
}

// A path the dependency does not export, or skill code that does not parse, is refused naming
// it, and nothing is written.
func TestVendorSubpathRefusals(t *testing.T) {
	for code, want := range map[string]string{
		"import { x } from '@acme/greet/missing';\nexport const y = x;\n": "dependencies.@acme/greet (imported as @acme/greet/missing) cannot be bundled",
		"export const = ;\n": "execute.ts:1:14: cannot be read for its imports",
	} {
		dir := t.TempDir()
		writeFiles(t, dir, nodeModules)
		writeFiles(t, dir, map[string]string{
			"node_modules/@acme/greet/package.json": `{"name": "@acme/greet", "version": "2.0.0", "exports": {".": "./esm.js"}}`,
			"package.json":                          `{"dependencies": {"@acme/greet": "2.0.0"}}`,
			"execute.ts":                            code,
		})
		_, err := Vendor(context.Background(), dir)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", code, err, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "lib")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%q: lib/ was written", code)
		}
	}
}
