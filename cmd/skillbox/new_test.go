package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outside returns a new temporary directory with no sdk/ in it or above it: where a user who has
// only the skillbox binary creates skills, so nothing can build against a checkout's SDK.
func outside(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "sdk")); err == nil {
			t.Fatalf("%s has an sdk/ above it: the test needs a directory outside any checkout", dir)
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// nextCommands returns the commands new printed under "next:", each as the arguments for cli.
// The test directories hold no spaces or quotes, so a field split is the shell's.
func nextCommands(t *testing.T, stdout string) [][]string {
	t.Helper()
	_, next, ok := strings.Cut(stdout, "\nnext:\n")
	if !ok {
		t.Fatalf("no next: in %q", stdout)
	}
	var cmds [][]string
	for _, l := range strings.Split(strings.TrimSpace(next), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "skillbox" {
			t.Fatalf("next: line %q is not a skillbox command", l)
		}
		cmds = append(cmds, f[1:])
	}
	return cmds
}

// TestNewBuildRun does what a new user with only the binary does, for every language, in a
// directory outside any checkout (skills not in ./skills): new, then the build and run commands new
// printed, as printed. Then it moves the skill to another directory, builds it there afresh and
// runs it: a compiled skill carries its own copy of the SDK. Build and run of a language whose
// toolchain is missing are skipped, unless SKILLBOX_REQUIRE_TOOLCHAINS=1 (CI sets it, so there
// every language must pass).
func TestNewBuildRun(t *testing.T) {
	t.Parallel()
	for _, name := range languageNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := templates.ReadDir("templates/" + name); err != nil {
				t.Fatalf("no template for %s", name)
			}
			skills := filepath.Join(outside(t), "my-skills")
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
			next := nextCommands(t, r.stdout)
			// new needs no toolchain; build and run do: a missing one skips them.
			if _, err := findToolchain(languages[name]); err != nil {
				var missing *missingToolchain
				if !errors.As(err, &missing) {
					t.Fatal(err)
				}
				skipMissing(t, err)
			}
			defaultTimeout(t, filepath.Join(skills, id))
			// With the skillbox binary, as the user does: it compiles the new module (or the
			// script's interpreter) several times faster than this test binary, and the
			// in-process builds and runs below load it from the cache (a build of the same
			// source is the same module).
			for _, cmd := range next {
				r = binCLI(t, "", cmd...)
				if r.code != exitOK {
					t.Fatalf("%s: %s", strings.Join(cmd, " "), r)
				}
			}
			if !strings.Contains(r.stdout, "Hello, Ada!") {
				t.Errorf("the printed run command: %s", r)
			}
			// Built from inside src/, as a user who cd's there would; the run logs.
			runsIn(t, skills, id, true)

			// Move the skill to another directory, outside any checkout too, and build it there.
			moved := filepath.Join(outside(t), "elsewhere")
			if err := os.Mkdir(moved, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(skills, id), filepath.Join(moved, id)); err != nil {
				t.Fatal(err)
			}
			if languages[name].runtime == "" {
				if err := os.Remove(filepath.Join(moved, id, "execute.wasm")); err != nil {
					t.Fatal(err)
				}
			}
			runsIn(t, moved, id, false)
		})
	}
}

// defaultTimeout removes the timeout new writes into the manifest of the skill in dir (5 s): its
// runs get the default (30 s). What the tests assert of them is their result, which a 5 s clock
// could preempt in this test binary, built with -race, on a busy machine.
func defaultTimeout(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "skill.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	limits, ok := m["limits"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no limits: %s", path, data)
	}
	delete(limits, "timeoutMs")
	if data, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(data))
}

// runsIn builds skills/id from its src/ (from the skill directory when fromSkill is false) and
// runs it, with arguments and with the default.
func runsIn(t *testing.T, skills, id string, fromSrc bool) {
	t.Helper()
	dir := filepath.Join(skills, id)
	if fromSrc {
		dir = filepath.Join(dir, "src")
	}
	r := cli(t, "", "build", dir)
	if r.code != exitOK || !strings.Contains(r.stdout, "built "+id) || !strings.Contains(r.stdout, "valid") {
		t.Fatalf("build %s: %s", dir, r)
	}
	r = cli(t, "", "--skills", skills, "run", id, "--args", "@"+filepath.Join(skills, id, "example.json"), "--json")
	if r.code != exitOK {
		t.Fatalf("run in %s: %s", skills, r)
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
}

// TestNewSelfContained: a compiled skill's source refers to its SDK only by a path inside the
// skill, and holds the SDK's source but not its tests.
func TestNewSelfContained(t *testing.T) {
	t.Parallel()
	skills := filepath.Join(outside(t), "skills")
	tests := []struct {
		lang  string
		file  string // in src/
		ref   string // how file refers to the SDK
		has   string // a file of the SDK's copy, in src/
		hasnt string // a test of the SDK, left out
	}{
		{"go", "go.mod", "replace github.com/skillbox-dev/skillbox/sdk/go => ./sdk\n", "sdk/run.go", "sdk/run_test.go"},
		{"tinygo", "go.mod", "replace github.com/skillbox-dev/skillbox/sdk/go => ./sdk\n", "sdk/go.mod", "sdk/wire_test.go"},
		{"rust", "Cargo.toml", `skillbox = { path = "sdk" }`, "sdk/src/lib.rs", "sdk/test.sh"},
		{"assemblyscript", "package.json", `"@skillbox/sdk": "file:sdk"`, "sdk/assembly/index.ts", "sdk/test"},
		{"c", "compile_flags.txt", "\n-I.\n", "skillbox.h", "test"},
	}
	for _, tc := range tests {
		id := "self-" + tc.lang
		if r := cli(t, "", "--skills", skills, "new", id, "--lang", tc.lang); r.code != exitOK {
			t.Fatalf("new %s: %s", tc.lang, r)
		}
		src := filepath.Join(skills, id, "src")
		body, err := os.ReadFile(filepath.Join(src, tc.file))
		if err != nil || !strings.Contains(string(body), tc.ref) {
			t.Errorf("%s: %s does not refer to the SDK as %q: %s %v", tc.lang, tc.file, tc.ref, body, err)
		}
		if _, err := os.Stat(filepath.Join(src, tc.has)); err != nil {
			t.Errorf("%s: the SDK's copy has no %s", tc.lang, tc.has)
		}
		if _, err := os.Stat(filepath.Join(src, tc.hasnt)); err == nil {
			t.Errorf("%s: the SDK's copy has its test %s", tc.lang, tc.hasnt)
		}
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	root := outside(t)
	skills := filepath.Join(root, "skills")
	if r := cli(t, "", "--skills", skills, "new", "taken", "--lang", "c"); r.code != exitOK {
		t.Fatalf("first new: %s", r)
	}
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
	if err != nil || !strings.Contains(string(mod), "=> ./sdk\n") {
		t.Errorf("go.mod: %s %v", mod, err)
	}
	// A failed new leaves nothing behind.
	if entries, _ := os.ReadDir(skills); len(entries) != 2 {
		t.Errorf("skills dir holds %d entries, want only 'taken' and 'relative'", len(entries))
	}
}

// TestNewSDKFlag: --sdk points the skill at an SDK directory (SDK development) once it is checked
// to be that language's SDK; anything else is refused naming the flag, the path and what was
// expected, and leaves nothing behind.
func TestNewSDKFlag(t *testing.T) {
	t.Parallel()
	repoSDK, err := filepath.Abs("../../sdk")
	if err != nil {
		t.Fatal(err)
	}
	root := outside(t)
	skills := filepath.Join(root, "skills")
	fake := filepath.Join(root, "fake")
	for dir, files := range map[string]map[string]string{
		"other-go":   {"go.mod": "module example.com/other\n\ngo 1.24\n"},
		"other-rust": {"Cargo.toml": "[package]\nname = \"other\"\n"},
		"other-as":   {"package.json": `{"name": "other"}`},
		"empty":      {},
	} {
		if err := os.MkdirAll(filepath.Join(fake, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for f, body := range files {
			writeFile(t, filepath.Join(fake, dir, f), body)
		}
	}
	writeFile(t, filepath.Join(fake, "file"), "")
	tests := []struct {
		lang, sdk string
		code      int
		stderr    string
	}{
		{"go", filepath.Join(fake, "missing"), exitFailed, "--sdk " + filepath.Join(fake, "missing") + ": not the SDK: no such directory (expected the go SDK: a go.mod declaring module github.com/skillbox-dev/skillbox/sdk/go)"},
		{"go", filepath.Join(fake, "file"), exitFailed, ": not the SDK: not a directory"},
		{"tinygo", filepath.Join(fake, "empty"), exitFailed, "--sdk " + filepath.Join(fake, "empty") + ": not the SDK: no go.mod in it"},
		{"go", filepath.Join(fake, "other-go"), exitFailed, `go.mod declares "example.com/other" (expected the go SDK: a go.mod declaring module github.com/skillbox-dev/skillbox/sdk/go)`},
		{"go", filepath.Join(repoSDK, "rust"), exitFailed, "no go.mod in it"},
		{"rust", filepath.Join(fake, "other-rust"), exitFailed, `Cargo.toml declares "other" (expected the rust SDK: a Cargo.toml for the crate named "skillbox")`},
		{"assemblyscript", filepath.Join(fake, "other-as"), exitFailed, `package.json declares "other" (expected the assemblyscript SDK: a package.json named "@skillbox/sdk")`},
		{"assemblyscript", filepath.Join(fake, "empty"), exitFailed, "no package.json in it"},
		{"c", filepath.Join(fake, "empty"), exitFailed, "no skillbox.h in it (expected the c SDK: skillbox.h)"},
		{"python", filepath.Join(repoSDK, "go"), exitUsage, "python skills need no SDK"},
	}
	for _, tc := range tests {
		r := cli(t, "", "--skills", skills, "new", "x", "--lang", tc.lang, "--sdk", tc.sdk)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%s --sdk %s: %s\nwant exit %d and %q", tc.lang, tc.sdk, r, tc.code, tc.stderr)
		}
	}
	if _, err := os.Stat(skills); err == nil {
		if entries, _ := os.ReadDir(skills); len(entries) != 0 {
			t.Errorf("refused news left %d entries behind", len(entries))
		}
	}
	// The repository's own SDKs pass, and the skill points at them: nothing is copied.
	for _, lang := range []string{"go", "tinygo", "rust", "assemblyscript", "c"} {
		id := "dev-" + lang
		sdk := filepath.Join(repoSDK, languages[lang].sdk)
		if r := cli(t, "", "--skills", skills, "new", id, "--lang", lang, "--sdk", sdk); r.code != exitOK {
			t.Errorf("%s --sdk %s: %s", lang, sdk, r)
			continue
		}
		src := filepath.Join(skills, id, "src")
		if _, err := os.Stat(filepath.Join(src, "sdk")); err == nil {
			t.Errorf("%s: new copied the SDK although --sdk was given", lang)
		}
		rel, err := filepath.Rel(src, sdk)
		if err != nil {
			t.Fatal(err)
		}
		file := map[string]string{"go": "go.mod", "tinygo": "go.mod", "rust": "Cargo.toml", "assemblyscript": "package.json", "c": "compile_flags.txt"}[lang]
		if body, _ := os.ReadFile(filepath.Join(src, file)); !strings.Contains(string(body), filepath.ToSlash(rel)) {
			t.Errorf("%s: %s does not point at %s: %s", lang, file, rel, body)
		}
	}
	// Go builds against it.
	if _, err := findToolchain(languages["go"]); err != nil {
		skipMissing(t, err)
	}
	// (With the binary: it compiles the new module several times faster than this test binary.)
	if r := binCLI(t, "", "build", filepath.Join(skills, "dev-go")); r.code != exitOK {
		t.Errorf("build against --sdk: %s", r)
	}
}

// TestNextSteps: the commands new prints work as they are pasted: --skills only when the skills
// directory is not the default, and paths quoted for the shell.
func TestNextSteps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		skills, lang, want string
	}{
		{"skills", "go", "next:\n  skillbox build skills/x\n  skillbox run x --args @skills/x/example.json\n"},
		{"skills", "python", "next:\n  skillbox run x --args @skills/x/example.json\n"},
		{"/tmp/a/b", "c", "next:\n  skillbox build /tmp/a/b/x\n  skillbox run --skills /tmp/a/b x --args @/tmp/a/b/x/example.json\n"},
		{"my skills", "rust", "next:\n  skillbox build 'my skills/x'\n  skillbox run --skills 'my skills' x --args @'my skills/x/example.json'\n"},
		{"it's", "javascript", `next:` + "\n" + `  skillbox run --skills 'it'\''s' x --args @'it'\''s/x/example.json'` + "\n"},
	}
	for _, tc := range tests {
		var out strings.Builder
		nextSteps(&out, tc.skills, filepath.Join(tc.skills, "x"), "x", languages[tc.lang])
		if !strings.HasSuffix(out.String(), tc.want) {
			t.Errorf("skills %q: got\n%s\nwant it to end with\n%s", tc.skills, out.String(), tc.want)
		}
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
