package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cacheDir is the --cache-dir of every test, so each Go-built skill module (3-4 MB, about a second
// to compile, much more under -race) is compiled once per test binary.
var cacheDir string

// bundled is the repository's skills directory, as seen from this package's directory.
const bundled = "../../skills"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "skillbox-cli-test-cache-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one in-process invocation of the CLI produced.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s\n--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// cli runs the CLI in-process with the shared --cache-dir prepended to args.
func cli(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	full := append([]string{"--cache-dir", cacheDir}, args...)
	code := run(full, strings.NewReader(stdin), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// skillFixture writes the skill package root/id: skill.json as given (when not empty) and, when
// wasm is not empty, ../../testdata/wasm/<wasm>.wasm as its execute.wasm. It returns the package's
// directory.
func skillFixture(t *testing.T, root, id, manifest, wasm string) string {
	t.Helper()
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if manifest != "" {
		writeFile(t, filepath.Join(dir, "skill.json"), manifest)
	}
	if wasm != "" {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", wasm+".wasm"))
		if err != nil {
			t.Fatalf("fixture %s: %v", wasm, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "execute.wasm"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// manifest returns a minimal valid manifest for id, with extra JSON members spliced in.
func manifest(id, extra string) string {
	m := `{"id":"` + id + `","name":"` + id + `","description":"test skill ` + id + `"`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// expand replaces the placeholders of a command line: $SKILLS is the bundled skills directory and
// $DIR the directory the case's given step returned.
func expand(args []string, dir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "$SKILLS", bundled)
		a = strings.ReplaceAll(a, "$DIR", dir)
		out[i] = a
	}
	return out
}

// expect is what a case checks of one invocation.
type expect struct {
	code      int
	stdout    []string // substrings stdout must contain
	stderr    []string // substrings stderr must contain
	notStdout []string // substrings stdout must not contain
	notStderr []string
	// emptyStdout asks for nothing at all on stdout (errors go to stderr).
	emptyStdout bool
	// check, when set, checks the rest (typically decoded JSON).
	check func(t *testing.T, r result)
}

// cliCase is one row of a table test: given sets up the files a case needs and returns a directory
// ($DIR in when); when is the command line; stdin is what the CLI reads.
type cliCase struct {
	name   string
	given  func(t *testing.T) string
	when   []string
	stdin  string
	expect expect
	// bug, when set, skips the case: it documents a known bug in non-test code. Set
	// SKILLBOX_TEST_BUGS=1 to run these cases anyway and see which bugs are still there.
	bug string
}

func runCases(t *testing.T, cases []cliCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bug != "" && os.Getenv("SKILLBOX_TEST_BUGS") == "" {
				t.Skip("BUG: " + tc.bug + " (SKILLBOX_TEST_BUGS=1 runs it)")
			}
			t.Parallel()
			dir := ""
			if tc.given != nil {
				dir = tc.given(t)
			}
			r := cli(t, tc.stdin, expand(tc.when, dir)...)
			tc.expect.verify(t, r)
		})
	}
}

func (e expect) verify(t *testing.T, r result) {
	t.Helper()
	if r.code != e.code {
		t.Fatalf("exit code %d, want %d\n%s", r.code, e.code, r)
	}
	for _, s := range e.stdout {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout does not contain %q\n%s", s, r)
		}
	}
	for _, s := range e.stderr {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr does not contain %q\n%s", s, r)
		}
	}
	for _, s := range e.notStdout {
		if strings.Contains(r.stdout, s) {
			t.Errorf("stdout contains %q\n%s", s, r)
		}
	}
	for _, s := range e.notStderr {
		if strings.Contains(r.stderr, s) {
			t.Errorf("stderr contains %q\n%s", s, r)
		}
	}
	if e.emptyStdout && r.stdout != "" {
		t.Errorf("stdout is not empty\n%s", r)
	}
	if e.check != nil {
		e.check(t, r)
	}
}

// decode parses the whole of s as one JSON value, failing the test otherwise.
func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, s)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value:\n%s", s)
	}
	return v
}

type obj = map[string]any

// at walks a decoded JSON value by object keys and array indexes ("top", 0, "word").
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	cur := v
	for i, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("%v: not an object at %v: %v", path, path[:i], cur)
			}
			next, ok := m[k]
			if !ok {
				t.Fatalf("%v: no key %q in %v", path, k, m)
			}
			cur = next
		case int:
			a, ok := cur.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no index %d in %v", path, k, cur)
			}
			cur = a[k]
		}
	}
	return cur
}

// num reads a JSON number (decoded with UseNumber) as a float64.
func num(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func wantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !jsonEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// jsonEqual compares decoded JSON with a Go literal by their JSON encodings.
func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// lines returns s's lines without the trailing empty one.
func lines(s string) []string {
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}
