package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTool writes an executable shell script named name into dir.
func fakeTool(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// fakeSysroot makes a rustc sysroot with a standard library for each target.
func fakeSysroot(t *testing.T, targets ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, tg := range targets {
		if err := os.MkdirAll(filepath.Join(root, "lib", "rustlib", tg, "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestFindToolchain checks that every gap in a toolchain is a *missingToolchain naming the missing
// piece (what the tests skip on), found through PATH only. PATH is set here: not parallel.
func TestFindToolchain(t *testing.T) {
	noWasm := fakeSysroot(t, "x86_64-unknown-linux-gnu")
	wasm := fakeSysroot(t, "wasm32-wasip1")
	wasmLLD := fakeSysroot(t, "wasm32-wasip1")
	fakeTool(t, filepath.Join(wasmLLD, "lib", "rustlib", "x86_64-unknown-linux-gnu", "bin"), "rust-lld", "exit 0")
	rustc := func(sysroot string) string { return "echo " + sysroot }

	tests := []struct {
		name  string
		lang  string
		tools map[string]map[string]string // PATH directory (in order: a, b) -> tool -> script
		want  string                       // in the error; "" for found
		bin   string                       // the tool found, as dir/name
	}{
		{"go: none", "go", nil, "go skills need go, which is not installed", ""},
		{"go", "go", map[string]map[string]string{"a": {"go": "exit 0"}}, "", "a/go"},
		{"tinygo: none", "tinygo", nil, "tinygo skills need tinygo,", ""},
		{"tinygo: no go", "tinygo", map[string]map[string]string{"a": {"tinygo": "exit 0"}}, "tinygo skills need go,", ""},
		{"assemblyscript: none", "assemblyscript", nil, "assemblyscript skills need npm,", ""},
		{"assemblyscript: no node", "assemblyscript", map[string]map[string]string{"a": {"npm": "exit 0"}}, "assemblyscript skills need node,", ""},
		{"c: none", "c", nil, "c skills need clang, which is not installed: on Debian: apt-get install clang", ""},
		{"c: no wasi-libc", "c", map[string]map[string]string{"a": {"clang": "echo 'wasm-ld: error: unable to find library -lc' >&2; exit 1"}},
			"c skills need a clang that links wasm32-wasi modules (wasm-ld, wasi-libc, compiler-rt for wasm32), which is not installed: on Debian: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32 (clang: wasm-ld: error: unable to find library -lc)", ""},
		{"c", "c", map[string]map[string]string{"a": {"clang": "cat >/dev/null; exit 0"}}, "", "a/clang"},
		{"rust: none", "rust", nil, "rust skills need a rustc with a wasm32-wasip1 or wasm32-wasi standard library, and cargo", ""},
		{"rust: no wasm32 std", "rust", map[string]map[string]string{"a": {"rustc": rustc(noWasm), "cargo": "exit 0"}}, "need a rustc with a wasm32", ""},
		{"rust: no cargo", "rust", map[string]map[string]string{"a": {"rustc": rustc(wasmLLD)}}, "need a rustc with a wasm32", ""},
		{"rust: no rust-lld", "rust", map[string]map[string]string{"a": {"rustc": rustc(wasm), "cargo": "exit 0"}}, "rust skills need rust-lld", ""},
		{"rust: rust-lld on PATH", "rust", map[string]map[string]string{"a": {"rustc": rustc(wasm), "cargo": "exit 0", "rust-lld": "exit 0"}}, "", "a/cargo"},
		// rustup's rustc first on PATH, without a wasm32 library; the one behind it has one.
		{"rust: second rustc", "rust", map[string]map[string]string{"a": {"rustc": rustc(noWasm), "cargo": "exit 0"}, "b": {"rustc": rustc(wasmLLD), "cargo": "exit 0"}}, "", "b/cargo"},
	}
	for _, tc := range tests {
		root := t.TempDir()
		path := []string{filepath.Join(root, "a"), filepath.Join(root, "b"), "", "."} // empty and relative entries are ignored
		for dir, tools := range tc.tools {
			for name, script := range tools {
				fakeTool(t, filepath.Join(root, dir), name, script)
			}
		}
		t.Setenv("PATH", strings.Join(path, string(os.PathListSeparator)))
		got, err := findToolchain(languages[tc.lang])
		if tc.want == "" {
			if err != nil || got.bin != filepath.Join(root, tc.bin) {
				t.Errorf("%s: got %+v, %v; want %s", tc.name, got, err, tc.bin)
			}
			continue
		}
		var missing *missingToolchain
		if !errors.As(err, &missing) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a missingToolchain saying %q", tc.name, err, tc.want)
		}
	}
}

// A Go skill made inside a Go workspace (a go.work above it that does not list it) builds as the
// module it is: the workspace is not the skill's.
func TestBuildGoSkillInsideAGoWorkspace(t *testing.T) {
	t.Parallel()
	if _, err := findToolchain(languages["go"]); err != nil {
		skipMissing(t, err)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.work"), "go 1.24\n")
	skills := filepath.Join(root, "skills")
	if r := cli(t, "", "--skills", skills, "new", "in-work", "--lang", "go"); r.code != exitOK {
		t.Fatalf("new: %s", r)
	}
	// With the binary: build checks the new module, which it compiles several times faster than
	// this test binary, built with -race.
	if r := binCLI(t, "", "build", filepath.Join(skills, "in-work")); r.code != exitOK || !strings.Contains(r.stdout, "built in-work") {
		t.Fatalf("build: %s", r)
	}
}
