package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testcache"

	"github.com/skillbox-dev/skillbox/runtime"
)

// cacheDir is the --cache-dir of every test, shared with the other packages' tests and kept
// between runs, so each Go-built skill module (3-4 MB, about a second to compile, much more under
// -race) is compiled once.
var cacheDir = testcache.Dir()

// bundled is the repository's skills directory, as seen from this package's directory.
const bundled = "../../skills"

// hangTimeout bounds a wait that only guards against a hang (a process that never answers or
// never exits): generous, so that a slow, busy machine never reaches it.
const hangTimeout = 3 * time.Minute

func TestMain(m *testing.M) {
	runtime.MaybeCompileChild() // as main does
	// Hermetic: the run history the commands keep by default goes to a directory of this test
	// binary's (and of the processes it starts), never the user's own data directory.
	data, err := os.MkdirTemp("", "skillbox-data-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_DATA_HOME", data)
	os.Setenv(dataDirEnv, filepath.Join(data, "skillbox")) // the project default, for every test that does not say
	// Make one Runtime before the parallel tests do: the first wazero.NewCompilationCacheWithDir
	// in a process races with any concurrent one (wazero v1.12.0 caches its version in a plain
	// global, internal/version.GetWazeroVersion; wazero/wazero#2532), which -race reports.
	var discard bytes.Buffer
	runCLI([]string{"--cache-dir", cacheDir, "--skills", filepath.Join(cacheDir, "none"), "list"}, strings.NewReader(""), &discard, &discard)
	// Most of the package's tests need the binary and the bundled modules compiled (see binary
	// and warm): when all of them run, make those from the start, while the others run.
	buildEnv = os.Environ()
	goTool, goToolErr = exec.LookPath("go")
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
		go warm(bundledModules...) // builds the binary first
	}
	code := m.Run()
	if buildStarted.Load() {
		buildBinary() // waits for a build still going
		os.RemoveAll(binDir)
	}
	os.RemoveAll(data)
	os.Exit(code)
}

// binDir holds the skillbox binary the tests that need a process of their own share; it is set
// once buildStarted is.
var (
	binDir       string
	buildStarted atomic.Bool
)

// buildEnv and goTool are the environment and the go command the binary is built and the bundled
// modules warmed with, as TestMain found them: the build may run while a test that is not
// parallel has set PATH to a directory of fake tools (t.Setenv).
var (
	buildEnv  []string
	goTool    string
	goToolErr error
)

var buildBinary = sync.OnceValues(func() (string, error) {
	buildStarted.Store(true)
	dir, err := os.MkdirTemp("", "skillbox-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "skillbox")
	if goToolErr != nil {
		return "", goToolErr
	}
	build := exec.Command(goTool, "build", "-buildvcs=false", "-o", bin, ".")
	build.Env = buildEnv
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// binary returns the path of skillbox built from this package, once for every test.
func binary(t testing.TB) string {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var (
	warmed sync.Map   // bundled module id -> its warmup, a sync.OnceFunc
	warmMu sync.Mutex // one warmup compiles at a time: each alone, quickest
)

// warm compiles the bundled modules ids names (see bundledModules) into the shared cache, each at
// most once per test binary, so that the cases and processes that need one load it from the
// cache instead of each compiling it. The skillbox binary compiles it, as `skillbox validate`
// checks it: several times faster than this test binary, built with -race, in whose child an
// in-process command compiles (a minute and more for a 3-4 MB module on a busy machine). The
// configuration is a run's too (the manifest's limits under the default policy: wazero's cache
// keys on it, and validate and run share it), so one compilation serves both.
func warm(ids ...string) {
	var wg sync.WaitGroup
	for _, id := range ids {
		once, _ := warmed.LoadOrStore(id, sync.OnceFunc(func() {
			warmMu.Lock()
			defer warmMu.Unlock()
			// The outcome does not matter here: the case that needs the module checks it. Without
			// a binary, the in-process command compiles it.
			args := []string{"--cache-dir", cacheDir, "validate", filepath.Join(bundled, id)}
			if bin, err := buildBinary(); err == nil {
				cmd := exec.Command(bin, args...)
				cmd.Env = buildEnv
				_ = cmd.Run()
				return
			}
			var discard bytes.Buffer
			runCLI(args, strings.NewReader(""), &discard, &discard)
		}))
		wg.Go(once.(func()))
	}
	wg.Wait()
}

// result is what one in-process invocation of the CLI produced.
type result struct {
	code           int
	stdout, stderr string
	// elapsed is the invocation's wall time: what a duration it reports can be checked against,
	// not a clock the test assumes.
	elapsed time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s\n--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// cli runs the CLI in-process with the shared --cache-dir prepended to args, and for a command
// that opens the store, unless args say where it is (an empty --data-dir= is the default one),
// t's own --data-dir (see testDataDir).
func cli(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	full := append([]string{"--cache-dir", cacheDir}, withTestStore(t, args)...)
	start := time.Now()
	code := runCLI(full, strings.NewReader(stdin), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
}

// binCLI runs the skillbox binary (see binary) as cli runs the CLI in-process: with the shared
// --cache-dir and t's own store. It is for the commands that compile a module or an interpreter
// no test has compiled yet, which skillbox does several times faster than this test binary,
// built with -race, in whose child an in-process command compiles: later commands, in-process,
// load it from the cache.
func binCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return binCLIEnv(t, nil, stdin, args...)
}

// binCLIEnv is binCLI with extra environment variables ("NAME=value").
func binCLIEnv(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--cache-dir", cacheDir}, withTestStore(t, args)...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("skillbox %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// storeCommands are the commands that open the store (they take --data-dir).
var storeCommands = map[string]bool{"run": true, "show": true, "script": true, "serve": true, "mcp": true, "install": true,
	"versions": true, "approve": true, "reject": true, "publish": true, "deprecate": true, "yank": true, "runs": true}

// testDataDirs are the data directories of the tests running, by *testing.T.
var testDataDirs sync.Map

// testDataDir is t's own data directory. A test's commands share one store, and no two tests
// do: the store keys skill versions by id, and "hello" is a different fixture in each test (a
// hello that asks for more than another test's would be pending there).
func testDataDir(t testing.TB) string {
	if d, ok := testDataDirs.Load(t); ok {
		return d.(string)
	}
	d := t.TempDir()
	testDataDirs.Store(t, d)
	t.Cleanup(func() { testDataDirs.Delete(t) })
	return d
}

// withTestStore is args with --data-dir testDataDir(t) after the command's name, when the
// command opens the store and args do not say where it is.
func withTestStore(t *testing.T, args []string) []string {
	at := -1
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, f := range []string{"--data-dir", "--database", "--no-store"} {
			if a == f || strings.HasPrefix(a, f+"=") {
				return args
			}
		}
		if _, ok := commands[a]; at < 0 && (ok || a == "help" || a == "completion") {
			at = i // the command's name: the first word that names one
		}
	}
	if at < 0 || !storeCommands[args[at]] {
		return args
	}
	return slices.Concat(args[:at+1], []string{"--data-dir", testDataDir(t)}, args[at+1:])
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

func writeFile(t testing.TB, path, content string) {
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
	// warm names the bundled modules the case compiles (see warm).
	warm []string
	// bug, when set, skips the case: it documents a known bug in non-test code. Set
	// SKILLBOX_TEST_BUGS=1 to run these cases anyway and see which bugs are still there.
	bug string
}

// runCases runs each case as a parallel subtest; the calling test runs in parallel with the others.
func runCases(t *testing.T, cases []cliCase) {
	t.Helper()
	t.Parallel()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bug != "" && os.Getenv("SKILLBOX_TEST_BUGS") == "" {
				t.Skip("BUG: " + tc.bug + " (SKILLBOX_TEST_BUGS=1 runs it)")
			}
			t.Parallel()
			warm(tc.warm...)
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
