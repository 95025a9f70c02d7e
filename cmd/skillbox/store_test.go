package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// runID runs hello with the extra flags and returns its run id (from --json).
func runID(t *testing.T, flags ...string) string {
	t.Helper()
	r := cli(t, "", append([]string{"--skills", bundled, "run", "hello", "--json"}, flags...)...)
	if r.code != exitOK {
		t.Fatalf("run hello: %v", r)
	}
	var res struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.RunID == "" {
		t.Fatalf("run hello's output %q: %v", r.stdout, err)
	}
	return res.RunID
}

// openDB opens the SQLite store at path, closed when t ends.
func openDB(t *testing.T, path string) store.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// skillbox run records its run in --data-dir: whole, with the CLI as its face, finished.
func TestRunRecordsInDataDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	id := runID(t, "--data-dir", dir)
	run, err := openDB(t, filepath.Join(dir, sqlite.FileName)).FindRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Skill != "hello" || run.Face != "cli" || run.Status != store.StatusSucceeded || run.Digest == "" || run.FinishedAt.IsZero() {
		t.Fatalf("the recorded run: %+v", run)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the data directory: %v, %v (want mode 0700: runs name callers)", st.Mode(), err)
	}
}

// Without --data-dir the history is in the user's data directory ($XDG_DATA_HOME/skillbox, which
// TestMain points at a temporary directory); --no-store leaves no trace there. (An empty
// --data-dir= is the default, and keeps cli from giving the test a directory of its own.)
func TestRunRecordsInTheUserDataDir(t *testing.T) {
	t.Parallel()
	kept := runID(t, "--data-dir=")
	untraced := runID(t, "--no-store")
	s := openDB(t, filepath.Join(os.Getenv("XDG_DATA_HOME"), "skillbox", sqlite.FileName))
	if _, err := s.FindRun(t.Context(), kept); err != nil {
		t.Fatalf("the run without --data-dir is not in the user data directory: %v", err)
	}
	if _, err := s.FindRun(t.Context(), untraced); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the --no-store run was recorded: %v", err)
	}
}

func TestDefaultDataDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "/srv/xdg")
	if d, err := defaultDataDir(); err != nil || d != filepath.Join("/srv/xdg", "skillbox") {
		t.Errorf("with XDG_DATA_HOME: %q, %v", d, err)
	}
	// The XDG spec: a relative path is to be ignored.
	t.Setenv("XDG_DATA_HOME", "relative/dir")
	if d, err := defaultDataDir(); err != nil || d != filepath.Join(home, ".local", "share", "skillbox") {
		t.Errorf("with a relative XDG_DATA_HOME: %q, %v", d, err)
	}
}

// A history that cannot be opened, or a command line that names it wrongly, is refused before
// anything runs, with the path or URL (never its password) and the fix.
func TestStoreRefusals(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a-file")
	writeFile(t, file, "not a directory")
	for _, tc := range []struct {
		name  string
		flags []string
		code  int
		want  []string
	}{
		{"data dir is a file", []string{"--data-dir", file}, exitFailed, []string{file, "--data-dir DIR", "--no-store"}},
		{"unknown scheme", []string{"--database", "mysql://u:s3cret@db.example/x"}, exitUsage, []string{"mysql://u:xxxxx@db.example/x", "postgres, postgresql", "--data-dir"}},
		{"unreachable postgres", []string{"--database", "postgres://u:s3cret@127.0.0.1:1/x?connect_timeout=2"}, exitFailed, []string{"127.0.0.1:1", "--no-store"}},
		{"both", []string{"--database", "postgres://h/x", "--data-dir", file}, exitUsage, []string{"give one"}},
		{"no-store and a place", []string{"--no-store", "--data-dir", file}, exitUsage, []string{"--no-store records nothing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, "", append([]string{"--skills", bundled, "run", "hello"}, tc.flags...)...)
			if r.code != tc.code || r.stdout != "" {
				t.Fatalf("want exit %d and no output: %v", tc.code, r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q: %s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "s3cret") {
				t.Errorf("stderr shows the password: %s", r.stderr)
			}
		})
	}
}
