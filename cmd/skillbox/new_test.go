package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workspace makes a directory that looks like a Skillbox checkout to `new`: skills/ beside a
// link to the repository's sdk/.
func workspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	sdk, err := filepath.Abs("../../sdk")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sdk, filepath.Join(root, "sdk")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNewBuildRun does what a new user does, for every language: new, build, run. Build and run
// of a language whose toolchain is missing are skipped, unless SKILLBOX_REQUIRE_TOOLCHAINS=1 (CI
// sets it, so there every language must pass).
func TestNewBuildRun(t *testing.T) {
	t.Parallel()
	for _, name := range languageNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := templates.ReadDir("templates/" + name); err != nil {
				t.Fatalf("no template for %s", name)
			}
			root := workspace(t)
			skills := filepath.Join(root, "skills")
			id := "hello-" + name
			r := cli(t, "", "--skills", skills, "new", id, "--lang", name)
			if r.code != exitOK || !strings.Contains(r.stdout, "created "+filepath.Join(skills, id)) {
				t.Fatalf("new: %s", r)
			}
			code := "src" // a compiled skill's source; a script skill's is its execute file
			if rt := languages[name].runtime; rt != "" {
				code = rt.CodeFile()
				if _, err := os.Stat(filepath.Join(skills, id, "src")); err == nil {
					t.Errorf("a %s skill got a src/ it does not use", name)
				}
			}
			for _, f := range []string{"skill.json", "SKILL.md", "example.json", code} {
				if _, err := os.Stat(filepath.Join(skills, id, f)); err != nil {
					t.Errorf("new wrote no %s", f)
				}
			}
			// new needs no toolchain; build and run do: a missing one skips them.
			if _, err := findToolchain(languages[name]); err != nil {
				var missing *missingToolchain
				if !errors.As(err, &missing) {
					t.Fatal(err)
				}
				skipMissing(t, err)
			}
			// Build from inside the skill directory's src/, as a user who cd's there would.
			r = cli(t, "", "build", filepath.Join(skills, id, "src"))
			if r.code != exitOK || !strings.Contains(r.stdout, "built "+id) || !strings.Contains(r.stdout, "valid") {
				t.Fatalf("build: %s", r)
			}
			r = cli(t, "", "--skills", skills, "run", id, "--args", "@"+filepath.Join(skills, id, "example.json"), "--json")
			if r.code != exitOK {
				t.Fatalf("run: %s", r)
			}
			var res struct {
				Result struct{ Greeting string }
				Logs   []struct{ Message string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatal(err)
			}
			if res.Result.Greeting != "Hello, Ada!" {
				t.Errorf("greeting %q", res.Result.Greeting)
			}
			logged := false
			for _, l := range res.Logs {
				logged = logged || l.Message == "greeting Ada"
			}
			if !logged {
				t.Errorf("no log line 'greeting Ada' in %+v", res.Logs)
			}
			// The default applies: no arguments greet the world.
			r = cli(t, "", "--skills", skills, "run", id)
			if r.code != exitOK || !strings.Contains(r.stdout, "Hello, world!") {
				t.Errorf("run with the default: %s", r)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	root := workspace(t)
	skills := filepath.Join(root, "skills")
	if r := cli(t, "", "--skills", skills, "new", "taken", "--lang", "c"); r.code != exitOK {
		t.Fatalf("first new: %s", r)
	}
	noSDK := filepath.Join(t.TempDir(), "skills")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no id", []string{"--skills", skills, "new"}, exitUsage, "new takes one skill id"},
		{"bad id", []string{"--skills", skills, "new", "Bad_Id"}, exitUsage, `"Bad_Id" is not a valid skill id`},
		{"unknown language", []string{"--skills", skills, "new", "x", "--lang", "cobol"}, exitUsage, `--lang "cobol": choose one of assemblyscript, c, go, javascript, python, rust, tinygo, typescript`},
		{"existing skill", []string{"--skills", skills, "new", "taken", "--lang", "c"}, exitFailed, "already exists"},
		{"no SDK above", []string{"--skills", noSDK, "new", "x", "--lang", "go"}, exitFailed, "no sdk/go directory above"},
	}
	for _, tc := range tests {
		r := cli(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%s: %s\nwant exit %d and %q", tc.name, r, tc.code, tc.stderr)
		}
	}
	// A relative skills directory (what a user types) works too.
	cwd, _ := os.Getwd()
	rel, err := filepath.Rel(cwd, skills)
	if err != nil {
		t.Fatal(err)
	}
	if r := cli(t, "", "--skills", rel, "new", "relative", "--lang", "go"); r.code != exitOK {
		t.Fatalf("new with a relative --skills: %s", r)
	}
	mod, err := os.ReadFile(filepath.Join(skills, "relative", "src", "go.mod"))
	if err != nil || !strings.Contains(string(mod), "=> ../../../sdk/go") {
		t.Errorf("go.mod: %s %v", mod, err)
	}
	// A failed new leaves nothing behind.
	if entries, _ := os.ReadDir(skills); len(entries) != 2 {
		t.Errorf("skills dir holds %d entries, want only 'taken' and 'relative'", len(entries))
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	if r := cli(t, "", "build", dir); r.code != exitFailed || !strings.Contains(r.stderr, "is not a skill directory") {
		t.Errorf("not a skill: %s", r)
	}
	skill := filepath.Join(dir, "s")
	if err := os.MkdirAll(filepath.Join(skill, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, "skill.json"), []byte(`{"id":"s","name":"s","description":"d"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, "", "build", skill); r.code != exitFailed || !strings.Contains(r.stderr, "cannot tell the skill's language") {
		t.Errorf("no language: %s", r)
	}
	// A missing toolchain says how to install it. (PATH holds nothing here: not parallel.)
	if err := os.WriteFile(filepath.Join(skill, "src", "main.c"), []byte("int x;"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	if r := cli(t, "", "build", skill); r.code != exitFailed || !strings.Contains(r.stderr, "c skills need clang, which is not installed: on Debian: apt-get install clang") {
		t.Errorf("missing toolchain: %s", r)
	}
	// A compiler quotes the skill's source in its errors: bidi overrides and escape sequences
	// there reach the terminal escaped. This clang passes findToolchain's probe (reading stdin),
	// then fails the build quoting the source.
	fakeTool(t, bin, "clang", `case "$*" in *" -") cat >/dev/null; exit 0;; esac
printf 'main.c:1:5: error: \342\200\256evil\033[2J\302\233 here\n\tint x;\n' >&2; exit 1`)
	r := cli(t, "", "build", skill)
	if r.code != exitFailed || !strings.Contains(r.stderr, "main.c:1:5: error: \\u202eevil\\x1b[2J\\x9b here\n\tint x;\n") {
		t.Errorf("compiler output: %s", r)
	}
	wantTerminalSafe(t, r)
	// A directory name in an error is cleaned too: skill bundles name their directories.
	hostile := filepath.Join(dir, "s\u202ex")
	if err := os.MkdirAll(hostile, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostile, "skill.json"), []byte(`{"id":"s","name":"s","description":"d"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, "", "build", hostile); r.code != exitFailed || !strings.Contains(r.stderr, `s\u202ex`) {
		t.Errorf("hostile directory name: %s", r)
	} else {
		wantTerminalSafe(t, r)
	}
}

func TestDetectLanguage(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		files map[string]string
		want  string
	}{
		"go":             {map[string]string{"go.mod": "module x\n"}, "go"},
		"tinygo":         {map[string]string{"go.mod": "module x\n\n// skillbox:build tinygo\n"}, "tinygo"},
		"tinygo, flags":  {map[string]string{"go.mod": "// skillbox:build tinygo -scheduler=none -opt=z\nmodule x\n"}, "tinygo"},
		"rust":           {map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}, "rust"},
		"assemblyscript": {map[string]string{"package.json": "{}"}, "assemblyscript"},
		"asconfig":       {map[string]string{"asconfig.json": "{}"}, "assemblyscript"},
		"c":              {map[string]string{"main.c": ""}, "c"},
	}
	for name, tc := range tests {
		dir := t.TempDir()
		for f, body := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := detectLanguage(dir)
		if err != nil || got.name != tc.want {
			t.Errorf("%s: got %q, %v", name, got.name, err)
		}
		if name == "tinygo, flags" && strings.Join(got.flags, " ") != "-scheduler=none -opt=z" {
			t.Errorf("tinygo flags %q", got.flags)
		}
	}
}

// TestBuildPrintsCleanPaths builds with a clang that writes a fixture module, in directories
// whose names hold a bidi override: the paths build prints are escaped, valid module or not.
// (PATH is set here: not parallel.)
func TestBuildPrintsCleanPaths(t *testing.T) {
	bin := t.TempDir()
	fakeTool(t, bin, "clang", `case "$*" in *" -") cat >/dev/null; exit 0;; esac
while [ $# -gt 0 ]; do if [ "$1" = -o ]; then cp "$SKILLBOX_FAKE_MODULE" "$2"; exit; fi; shift; done; exit 1`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	root := filepath.Join(t.TempDir(), "p\u202eq")
	tests := []struct {
		name, dir, module, stream, want string
	}{
		{"valid", "s", "hello", "stdout", `built s: ` + filepath.Join(root, "s") + `/execute.wasm, `},
		{"invalid", "t", "noexport", "stderr", `built ` + filepath.Join(root, "t") + `/execute.wasm, but it is not a valid skill:`},
	}
	for _, tc := range tests {
		skill := filepath.Join(root, tc.dir)
		if err := os.MkdirAll(filepath.Join(skill, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(skill, "skill.json"), manifest(tc.dir, ""))
		writeFile(t, filepath.Join(skill, "src", "main.c"), "int x;")
		module, err := filepath.Abs(filepath.Join("..", "..", "testdata", "wasm", tc.module+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("SKILLBOX_FAKE_MODULE", module)
		r := cli(t, "", "build", skill)
		out := map[string]string{"stdout": r.stdout, "stderr": r.stderr}[tc.stream]
		if want := strings.ReplaceAll(tc.want, "\u202e", `\u202e`); !strings.Contains(out, want) {
			t.Errorf("%s: %s\nwant on %s: %q", tc.name, r, tc.stream, want)
		}
		wantTerminalSafe(t, r)
	}
}
