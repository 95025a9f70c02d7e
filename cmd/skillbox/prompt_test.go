package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/syncbuf"
)

// askFixture is a skills directory with "asker", a script skill that fetches a URL its manifest
// does not ask for, and a policy that lets a person allow the loopback host; it returns the
// directory, the policy file and the URL.
func askFixture(t *testing.T) (string, string, string) {
	t.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(upstream.Close)
	root := t.TempDir()
	dir := filepath.Join(root, "skills")
	if err := os.MkdirAll(filepath.Join(dir, "asker"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "asker", "skill.json"), manifest("asker", `"parameters":{"url":{"type":"string","required":true}}`))
	writeFile(t, filepath.Join(dir, "asker", "execute.js"), `export async function execute(args, ctx) {
  try { return {status: (await ctx.fetch(args.url)).status}; } catch (e) { return {error: e.name}; }
}`)
	pol := filepath.Join(root, "policy.yaml")
	writeFile(t, pol, "allowNetworks: [127.0.0.0/8]\nask:\n  network: [127.0.0.1]\n  maxGrantMinutes: 90\n")
	return dir, pol, upstream.URL
}

// prompted runs `skillbox run asker` with --ask always, answering each prompt it shows on stderr
// with the next of answers, and returns its result.
func prompted(t *testing.T, dir, pol, url string, answers ...string) result {
	t.Helper()
	return promptedRun(t, []string{"--skills", dir, "--policy", pol, "run", "asker", "--ask", "always",
		"--args", `{"url":"` + url + `"}`}, answers...)
}

// promptedRun runs the CLI with args, answering each prompt it shows on stderr with the next of
// answers, and returns its result.
func promptedRun(t *testing.T, args []string, answers ...string) result {
	t.Helper()
	in, answer := io.Pipe()
	var stdout bytes.Buffer
	stderr := &syncbuf.Buffer{}
	args = withTestStore(t, append([]string{"--cache-dir", cacheDir}, args...))
	done := make(chan int, 1)
	go func() { done <- runCLI(args, in, &stdout, stderr) }()
	shown := 0
	for {
		select {
		case code := <-done:
			answer.Close()
			return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
		case <-time.After(time.Millisecond):
		}
		// Each prompt ends with ": "; answer the ones not answered yet, as a person would.
		if n := strings.Count(stderr.String(), "]: "); n > shown && shown < len(answers) {
			if _, err := io.WriteString(answer, answers[shown]+"\n"); err != nil {
				t.Fatal(err)
			}
			shown++
		}
	}
}

// On a terminal, `skillbox run` puts a run's permission request to the person: allowed once the
// fetch goes through; denied it is refused; allowed for a time, the next run is not asked; and
// without --ask (stdin no terminal) nobody is asked.
func TestRunAsksAtTheTerminal(t *testing.T) {
	dir, pol, url := askFixture(t)
	r := prompted(t, dir, pol, url, "o")
	if r.code != 0 || squeeze(r.stdout) != `{"status":204}` || !strings.Contains(r.stderr, `The skill "asker" asks to fetch from 127.0.0.1`) {
		t.Fatalf("allowed once: %s", r)
	}
	if r := prompted(t, dir, pol, url, "d"); squeeze(r.stdout) != `{"error":"PermissionDenied"}` {
		t.Errorf("denied: %s", r)
	}
	if r := prompted(t, dir, pol, url, "f", "500"); squeeze(r.stdout) != `{"error":"PermissionDenied"}` || !strings.Contains(r.stderr, "1 to 90") {
		t.Errorf("too many minutes: %s", r)
	}
	if r := prompted(t, dir, pol, url, "f", "30"); squeeze(r.stdout) != `{"status":204}` {
		t.Errorf("allowed for 30 minutes: %s", r)
	}
	if r := prompted(t, dir, pol, url); squeeze(r.stdout) != `{"status":204}` || strings.Contains(r.stderr, "asks to fetch") {
		t.Errorf("within the permit: %s, want no question", r)
	}
	r = cli(t, "", "--skills", dir, "--policy", pol, "run", "asker", "--args", `{"url":"`+url+`:1"}`)
	if strings.Contains(r.stderr, "asks to fetch") {
		t.Errorf("stdin no terminal: %s, want no question", r)
	}
	if r := cli(t, "", "--skills", dir, "run", "asker", "--ask", "sometimes"); r.code != exitUsage || !strings.Contains(r.stderr, `--ask "sometimes"`) {
		t.Errorf("--ask sometimes: %s", r)
	}
}

// squeeze is s without its whitespace: a result as printed, indented, compared in one line.
func squeeze(s string) string { return strings.Join(strings.Fields(s), "") }

// A run handed to a server (--server) asks here too: its events come as a stream, and the
// answer goes back to the server with the run's key.
func TestRunHandedOffAsksAtTheTerminal(t *testing.T) {
	dir, pol, url := askFixture(t)
	srv := startServe(t, binary(t), true, "serve", "--addr", "127.0.0.1:0", "--skills", dir, "--policy", pol)
	args := func(u string) []string {
		return []string{"run", "asker", "--server", srv.base, "--ask", "always", "--args", `{"url":"` + u + `"}`}
	}
	r := promptedRun(t, args(url), "o")
	if r.code != 0 || squeeze(r.stdout) != `{"status":204}` || !strings.Contains(r.stderr, `The skill "asker" asks to fetch from 127.0.0.1`) {
		t.Fatalf("allowed once through the server: %s", r)
	}
	if r := promptedRun(t, args(url), "d"); squeeze(r.stdout) != `{"error":"PermissionDenied"}` {
		t.Errorf("denied through the server: %s", r)
	}
}
