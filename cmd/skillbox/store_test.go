package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// runID runs hello with the extra flags and returns its run id (from --json).
func runID(t *testing.T, flags ...string) string {
	t.Helper()
	warm("hello")
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

// Without --data-dir the history is in $SKILLBOX_DATA_DIR (which TestMain points at a temporary
// directory); --no-store leaves no trace there. (An empty --data-dir= is the default, and keeps
// cli from giving the test a directory of its own.)
func TestRunRecordsInTheDefaultDataDir(t *testing.T) {
	t.Parallel()
	kept := runID(t, "--data-dir=")
	untraced := runID(t, "--no-store")
	s := openDB(t, filepath.Join(os.Getenv(dataDirEnv), sqlite.FileName))
	if _, err := s.FindRun(t.Context(), kept); err != nil {
		t.Fatalf("the run without --data-dir is not in the default data directory: %v", err)
	}
	if _, err := s.FindRun(t.Context(), untraced); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the --no-store run was recorded: %v", err)
	}
}

// Without --data-dir or $SKILLBOX_DATA_DIR, a project keeps its own store: .skillbox/ beside its
// first skills directory, mode 0700. Two projects with a skill of the same id each run their
// own, and show and run agree. A store an older skillbox kept for every project in the user's
// data directory is named on a project's first run, with how to keep using it, never used in
// silence, and not again.
func TestEachProjectKeepsItsOwnStore(t *testing.T) {
	t.Setenv(dataDirEnv, "")
	legacy := filepath.Join(os.Getenv("XDG_DATA_HOME"), "skillbox")
	must(t, os.MkdirAll(legacy, 0o700))
	old, err := sqlite.Open(t.Context(), filepath.Join(legacy, sqlite.FileName))
	must(t, err)
	old.Close()
	warm("hello")
	projects := []string{t.TempDir(), t.TempDir()}
	for i, p := range projects {
		skills := filepath.Join(p, "skills")
		must(t, os.CopyFS(filepath.Join(skills, "hello"), os.DirFS(filepath.Join(bundled, "hello"))))
		if i == 1 { // the second project's hello is another content under the same id
			writeFile(t, filepath.Join(skills, "hello", "SKILL.md"), "---\nname: hello\ndescription: another hello\n---\nSay hi.\n")
		}
		r := cli(t, "", "--skills", skills, "run", "hello", "--data-dir=", "--json")
		if r.code != exitOK {
			t.Fatalf("project %d: %v", i, r)
		}
		if !strings.Contains(r.stderr, "an older skillbox kept every project's") || !strings.Contains(r.stderr, "--data-dir "+legacy) {
			t.Errorf("project %d: no note of the older store on its first run: %q", i, r.stderr)
		}
		if r2 := cli(t, "", "--skills", skills, "run", "hello", "--data-dir=", "--json"); strings.Contains(r2.stderr, "older skillbox") {
			t.Errorf("project %d: the note again on the second run: %q", i, r2.stderr)
		}
		dir := filepath.Join(p, ".skillbox")
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("project %d's data directory: %v", i, err)
		}
		var res struct {
			Digest string `json:"digest"`
		}
		must(t, json.Unmarshal([]byte(r.stdout), &res))
		show := cli(t, "", "--skills", skills, "show", "hello", "--json")
		if !strings.Contains(show.stdout, res.Digest) {
			t.Errorf("project %d: show does not name the digest that ran (%s):\n%s", i, res.Digest, show.stdout)
		}
	}
	// Published, then edited: run serves the published version, and show says so.
	skills := filepath.Join(projects[0], "skills")
	first := cli(t, "", "--skills", skills, "show", "hello", "--data-dir=", "--json")
	var before struct{ Digest string }
	must(t, json.Unmarshal([]byte(first.stdout), &before))
	expect{code: exitOK}.verify(t, cli(t, "", "--skills", skills, "publish", "hello", before.Digest, "--data-dir="))
	writeFile(t, filepath.Join(skills, "hello", "SKILL.md"), "---\nname: hello\ndescription: edited\n---\nSay hi.\n")
	ran := cli(t, "", "--skills", skills, "run", "hello", "--data-dir=", "--json")
	shown := cli(t, "", "--skills", skills, "show", "hello", "--data-dir=", "--json")
	var res struct{ Digest string }
	var detail struct {
		Digest  string
		Serving struct{ Digest, Status string }
	}
	must(t, json.Unmarshal([]byte(ran.stdout), &res))
	must(t, json.Unmarshal([]byte(shown.stdout), &detail))
	if res.Digest != before.Digest || detail.Serving.Digest != res.Digest || detail.Serving.Status != "active" || detail.Digest == res.Digest {
		t.Fatalf("after an edit: ran %s; show says %+v (published %s)", res.Digest, detail, before.Digest)
	}
	expect{code: exitOK, stdout: []string{"not this folder's content", "the active version serves"}}.verify(t, cli(t, "", "--skills", skills, "show", "hello", "--data-dir="))
	a := openDB(t, filepath.Join(projects[0], ".skillbox", sqlite.FileName))
	b := openDB(t, filepath.Join(projects[1], ".skillbox", sqlite.FileName))
	va, _ := a.Versions(t.Context(), "hello")
	vb, _ := b.Versions(t.Context(), "hello")
	if len(va) != 2 || len(vb) != 1 || va[1].Digest == vb[0].Digest {
		t.Fatalf("each project's versions: %+v / %+v", va, vb)
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

// skillbox runs lists what run recorded, newest first, filtered and paged as asked, and prints
// one run whole; a bad filter is a usage error that names the flag.
func TestRunsCommand(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	skillFixture(t, skills, "fine", manifest("fine", `"version":"1.0.0"`), "hello")
	skillFixture(t, skills, "trap", manifest("trap", ""), "unreachable")
	in := func(args ...string) []string { return append(args, "--skills", skills) }
	expect{code: exitOK}.verify(t, cli(t, "", in("run", "fine")...))
	expect{code: exitFailed}.verify(t, cli(t, "", in("run", "trap")...))
	expect{code: exitOK}.verify(t, cli(t, "", in("run", "fine")...))

	page := func(args ...string) store.Page {
		t.Helper()
		r := cli(t, "", append([]string{"runs", "--json"}, args...)...)
		expect{code: exitOK}.verify(t, r)
		var p store.Page
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatalf("runs --json: %v\n%s", err, r)
		}
		return p
	}
	all := page()
	if len(all.Runs) != 3 || all.Runs[0].Skill != "fine" || all.Runs[1].Skill != "trap" || all.Next != "" {
		t.Fatalf("runs, newest first: %+v", all)
	}
	failed := all.Runs[1]
	if failed.Status != store.StatusFailed || failed.Error == nil || failed.Error.Kind != "trap" || failed.Caller != osUser() || failed.Face != "cli" {
		t.Fatalf("the failed run: %+v", failed)
	}
	if p := page("--status", "failed"); len(p.Runs) != 1 || p.Runs[0].ID != failed.ID {
		t.Fatalf("--status failed: %+v", p)
	}
	if p := page("--skill", "fine", "--since", "1h"); len(p.Runs) != 2 {
		t.Fatalf("--skill fine --since 1h: %+v", p)
	}
	if p := page("--since", time.Now().Add(time.Hour).Format(time.RFC3339)); len(p.Runs) != 0 {
		t.Fatalf("--since an hour ahead: %+v", p)
	}
	first := page("--limit", "2")
	if len(first.Runs) != 2 || first.Next == "" {
		t.Fatalf("--limit 2: %+v", first)
	}
	if rest := page("--limit", "2", "--cursor", first.Next); len(rest.Runs) != 1 || rest.Runs[0].ID != all.Runs[2].ID {
		t.Fatalf("--cursor: %+v", rest)
	}

	expect{code: exitOK, stdout: []string{"RUN", "SKILL", "VERSION", "DIGEST", "FACE", "CALLER", "STATUS", "ERROR", "DURATION", "STARTED"}, check: func(t *testing.T, r result) {
		for _, line := range strings.Split(r.stdout, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == failed.ID {
				if want := []string{failed.ID, "trap", shortDigest(failed.Digest), "cli", osUser(), "failed", "trap"}; !slices.Equal(f[:7], want) {
					t.Errorf("the failed run's row: %q, want it to start %q", f, want)
				}
				return
			}
		}
		t.Errorf("no row for %s:\n%s", failed.ID, r.stdout)
	}}.verify(t, cli(t, "", "runs"))
	expect{code: exitOK, stderr: []string{"--cursor " + first.Next}}.verify(t, cli(t, "", "runs", "--limit", "2"))
	expect{code: exitOK, stdout: []string{"run       " + failed.ID, "skill     trap", "status    failed", "error     trap:", "args      not recorded", "usage     {"}}.
		verify(t, cli(t, "", "runs", failed.ID))
	expect{code: exitFailed, stderr: []string{`no run "run_nope"`, "skillbox runs lists"}}.verify(t, cli(t, "", "runs", "run_nope"))
	for flag, want := range map[string]string{
		"--status=bad": "--status \"bad\": use queued, running, succeeded, failed or interrupted",
		"--since=3x":   "--since \"3x\": give a duration",
		"--since=-1h":  "give a positive duration",
		"--limit=5000": "--limit 5000: give 1 to 1000",
		"--cursor=xyz": "cursor: not one this server made",
	} {
		expect{code: exitUsage, stderr: []string{want}, emptyStdout: true}.verify(t, cli(t, "", "runs", flag))
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2025, 6, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"90m":                  now.Add(-90 * time.Minute),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"1d12h":                now.Add(-36 * time.Hour),
		"2025-06-01T08:00:00Z": time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC),
		"2025-06-01":           time.Date(2025, 6, 1, 0, 0, 0, 0, time.Local),
		"2025-06-01 08:30":     time.Date(2025, 6, 1, 8, 30, 0, 0, time.Local),
	} {
		if got, err := parseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "7x", "-5m", "0s", "99999d", "2025-13-01"} {
		if got, err := parseSince(in, now); err == nil {
			t.Errorf("parseSince(%q) = %v, want an error", in, got)
		}
	}
}

// --keep-runs and --keep-runs-for bound the history the recording commands keep, counting the
// command's own run; values that make no sense are usage errors that say what to give.
func TestKeepRuns(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := openDB(t, filepath.Join(data, sqlite.FileName))
	old := store.Run{ID: "run_old", Skill: "hello", Status: store.StatusSucceeded, StartedAt: time.Now().Add(-2 * time.Hour), FinishedAt: time.Now().Add(-2 * time.Hour)}
	if err := s.FinishRun(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		p, err := s.ListRuns(t.Context(), store.Query{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Runs)
	}
	runID(t, "--data-dir", data)
	if n := count(); n != 2 {
		t.Fatalf("by default the run two hours old stays: %d runs", n)
	}
	runID(t, "--data-dir", data, "--keep-runs-for", "1h")
	if _, err := s.FindRun(t.Context(), old.ID); !errors.Is(err, store.ErrNotFound) || count() != 2 {
		t.Fatalf("--keep-runs-for 1h kept the run two hours old (%v), or not the last two (%d)", err, count())
	}
	last := runID(t, "--data-dir", data, "--keep-runs", "1")
	if n := count(); n != 1 {
		t.Fatalf("--keep-runs 1: %d runs", n)
	}
	if _, err := s.FindRun(t.Context(), last); err != nil {
		t.Fatalf("--keep-runs 1 did not keep the command's own run: %v", err)
	}
	runID(t, "--data-dir", data, "--keep-runs", "unlimited", "--keep-runs-for", "unlimited")
	if n := count(); n != 2 {
		t.Fatalf("unlimited: %d runs", n)
	}

	for _, tc := range [][]string{
		{"--keep-runs", "-1", "give a number of runs, 0 or more, or unlimited"},
		{"--keep-runs", "lots", "give a number of runs"},
		{"--keep-runs-for", "-1h", "give a duration such as 72h or 90d"},
		{"--keep-runs-for", "soon", "give a duration such as 72h or 90d"},
		{"--keep-runs-for", "10s", "10s is less than 1m0s"},
		{"--keep-runs-for", "10s", "to keep no history, use --no-store"},
		{"--no-store", "--keep-runs=5", "--no-store records nothing: drop --keep-runs"},
	} {
		r := cli(t, "", "--skills", bundled, "run", "hello", "--data-dir", data, tc[0], tc[1])
		if tc[0] == "--no-store" {
			r = cli(t, "", "--skills", bundled, "run", "hello", tc[0], tc[1])
		}
		expect{code: exitUsage, stderr: []string{tc[2]}, emptyStdout: true}.verify(t, r)
	}
}
