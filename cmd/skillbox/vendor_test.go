package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/pydeps/pydepstest"
)

// skillbox vendor resolves a Python skill's pinned requirements with a real pip from a real
// index on loopback, and the skill then imports them in the sandbox: the vendored files are
// the skill's, checked and digested like its code; a requirement with only a C extension's
// wheel is refused, named.
func TestVendorThenRun(t *testing.T) {
	t.Parallel()
	pydepstest.NeedPip(t)
	wheels := map[string][]byte{}
	for _, w := range []struct {
		name  string
		files map[string]string
		tag   string
		reqs  []string
	}{
		{"greeting", map[string]string{"greeting/__init__.py": "from lxml import etree\nfrom punct import BANG\ndef hello(who):\n    return etree.fromstring('<g>hello ' + who + BANG + '</g>').text\n"}, "py3-none-any", []string{"punct ==1.0", "lxml >=4"}},
		{"punct", map[string]string{"punct/__init__.py": "BANG = '!'\n"}, "py3-none-any", nil},
		{"fastjson", map[string]string{"fastjson/_c.so": "\x7fELF"}, "cp311-cp311-manylinux_2_17_x86_64", nil},
	} {
		name, data := pydepstest.BuildWheel(t, w.name, "1.0", w.tag, w.files, w.reqs...)
		wheels[name] = data
	}
	url := pydepstest.Index(t, wheels)
	skills := t.TempDir()
	dir := filepath.Join(skills, "greet")
	for name, text := range map[string]string{
		"skill.json":       `{"id": "greet", "name": "Greet", "description": "Greets.", "parameters": {"who": {"type": "string", "required": true}}}`,
		"execute.py":       "from greeting import hello\n\ndef execute(args, ctx):\n    return hello(args['who'])\n",
		"requirements.txt": "greeting==1.0\n",
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expect{code: exitFailed, stdout: []string{`No module named 'greeting'`}}.verify(t, cli(t, "", "--skills", skills, "run", "greet", "--json", "--args", `{"who": "ada"}`))
	expect{code: exitOK, stdout: []string{"vendored 2 wheels", "greeting 1.0", "punct 1.0", "built into Skillbox's Python, not vendored: lxml==4.9.2"}}.verify(t, cli(t, "", "vendor", dir, "--index-url", url))
	expect{code: exitOK, stdout: []string{`"hello ada!"`}}.verify(t, cli(t, "", "--skills", skills, "run", "greet", "--json", "--args", `{"who": "ada"}`))
	expect{code: exitOK, stdout: []string{"ok      greet"}}.verify(t, cli(t, "", "validate", dir))

	if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("fastjson==1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect{code: exitFailed, stderr: []string{"fastjson==1.0 has no pure-Python wheel"}}.verify(t, cli(t, "", "vendor", dir, "--index-url", url))
	expect{code: exitUsage, stderr: []string{"vendor takes the skill's directory"}}.verify(t, cli(t, "", "vendor"))
}

// skillbox vendor bundles a TypeScript skill's pinned package.json dependencies from its
// node_modules into lib/, with the path inside one that it imports, and the skill's bare
// imports then run in the sandbox.
func TestVendorJavaScriptThenRun(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	dir := filepath.Join(skills, "greet-ts")
	for name, text := range map[string]string{
		"skill.json":                            `{"id": "greet-ts", "name": "Greet", "description": "Greets.", "parameters": {"who": {"type": "string", "required": true}}}`,
		"execute.ts":                            "import { greet } from '@acme/greet';\nimport { shout } from '@acme/greet/shout';\nexport function execute(args: { who: string }) { return greet(args.who) + ' ' + shout(args.who); }\n",
		"package.json":                          `{"name": "greet-ts", "private": true, "dependencies": {"@acme/greet": "2.0.0"}}`,
		"node_modules/@acme/greet/package.json": `{"name": "@acme/greet", "version": "2.0.0", "main": "index.js", "exports": {".": "./index.js", "./shout": "./lib/shout.js"}}`,
		"node_modules/@acme/greet/index.js":     "const pad = require('left-pad');\nexports.greet = (who) => 'hello ' + pad(who, 5, '*');\n",
		"node_modules/@acme/greet/lib/shout.js": "exports.shout = (who) => who.toUpperCase() + '!';\n",
		"node_modules/left-pad/package.json":    `{"name": "left-pad", "version": "1.3.0", "main": "index.js"}`,
		"node_modules/left-pad/index.js":        "module.exports = (s, n, c) => { s = String(s); while (s.length < n) s = c + s; return s; };\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expect{code: exitOK, stdout: []string{"bundled 2 modules", "@acme/greet 2.0.0, @acme/greet/shout 2.0.0"}}.verify(t, cli(t, "", "vendor", dir))
	expect{code: exitOK, stdout: []string{`"hello **ada ADA!"`}}.verify(t, cli(t, "", "--skills", skills, "run", "greet-ts", "--json", "--args", `{"who": "ada"}`))
}
