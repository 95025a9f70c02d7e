package runtime

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// bundledSkill copies the bundled skill id from ../skills into a new skills directory, with its
// manifest changed by edit.
func bundledSkill(t *testing.T, id string, edit func(m map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "skills", id)
	must(t, os.CopyFS(filepath.Join(dir, id), os.DirFS(src)))
	raw, err := os.ReadFile(filepath.Join(src, "skill.json"))
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(raw, &m))
	edit(m)
	raw, _ = json.Marshal(m)
	must(t, os.WriteFile(filepath.Join(dir, id, "skill.json"), raw, 0o644))
	return dir
}

// The TypeScript skill calls the API its manifest names, with the token the host injects: the
// server sees it, the skill's code and its result do not.
func TestBundledGitHubIssues(t *testing.T) {
	const token = "ghp_test_token_value"
	var gotAuth, gotPath string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath = r.Header.Get("Authorization"), r.URL.RequestURI()
		if !strings.HasPrefix(r.URL.Path, "/repos/acme/widgets/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[
 {"number": 7, "title": "Crash on empty input", "html_url": "https://github.com/acme/widgets/issues/7", "user": {"login": "ada"},
  "labels": [{"name": "bug"}], "created_at": "2026-11-01T10:00:00Z", "comments": 3},
 {"number": 6, "title": "Add a flag", "html_url": "https://github.com/acme/widgets/pull/6", "user": {"login": "bo"},
  "labels": [], "created_at": "2026-10-30T10:00:00Z", "comments": 0, "pull_request": {}},
 {"number": 5, "title": "Docs typo", "html_url": "https://github.com/acme/widgets/issues/5", "user": null,
  "labels": ["docs"], "created_at": "2026-10-29T10:00:00Z", "comments": 1}]`))
	}))
	defer srv.Close()
	dir := bundledSkill(t, "github-issues", func(m map[string]any) {
		p := m["permissions"].(map[string]any)
		p["network"] = []string{"127.0.0.1"}
		p["secrets"].([]any)[0].(map[string]any)["hosts"] = []string{"127.0.0.1"}
	})
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	pol := &policy.Policy{Network: []string{"127.0.0.1"}, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Env:     map[string]string{"GITHUB_API_URL": srv.URL + "/"},
		Secrets: map[string]policy.Secret{"GITHUB_TOKEN": {Value: token, Hosts: []string{"127.0.0.1"}}}, RootCAs: pool}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: pol})
	res, err := rt.Run(context.Background(), run.Request{Skill: "github-issues", Args: []byte(`{"repo":"acme/widgets","limit":5,"label":"bug"}`), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if gotAuth != "Bearer "+token || gotPath != "/repos/acme/widgets/issues?state=open&per_page=10&labels=bug" {
		t.Fatalf("server saw Authorization %q, path %q", gotAuth, gotPath)
	}
	var got struct {
		Count  int
		Issues []struct {
			Number int
			Author string
			Labels []string
		}
	}
	must(t, json.Unmarshal(res.Result, &got))
	if got.Count != 2 || got.Issues[0].Number != 7 || got.Issues[0].Labels[0] != "bug" || got.Issues[1].Author != "ghost" || got.Issues[1].Labels[0] != "docs" {
		t.Fatalf("result %s", res.Result)
	}
	logs, _ := json.Marshal(res.Logs)
	if strings.Contains(string(res.Result)+string(logs), token) {
		t.Fatal("the token reached the skill")
	}
	res, err = rt.Run(context.Background(), run.Request{Skill: "github-issues", Args: []byte(`{"repo":"acme/nothing"}`), Who: testAdmin})
	if err == nil || res.Error.Kind != run.KindSkillError || !strings.Contains(res.Error.Message, "no repository acme/nothing") {
		t.Fatalf("a 404: %v", err)
	}
}

// The bundled Python skill summarises a table given inline or as a file under a granted
// directory.
func TestBundledCSVStats(t *testing.T) {
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "sales.csv"), []byte("region;units;price\nnorth;3;1,200.50\nsouth;5;99\nnorth;;10\n"), 0o644))
	p := &policy.Policy{Files: []policy.Mount{{Path: "/workspace", HostPath: ws, Access: spec.ReadOnly}}}
	rt := newRuntime(t, Config{SkillDirs: []string{"../skills"}, Policy: p})
	ctx := context.Background()
	res, err := rt.Run(ctx, run.Request{Skill: "csv-stats", Args: []byte(`{"file":"/workspace/sales.csv","top":1}`), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows      int
		Delimiter string
		Columns   map[string]struct {
			Type           string
			Count, Missing int
			Mean, Min, Max float64
			Distinct       int
			Top            []struct{ Value string }
		}
	}
	must(t, json.Unmarshal(res.Result, &got))
	units, price, region := got.Columns["units"], got.Columns["price"], got.Columns["region"]
	if got.Rows != 3 || got.Delimiter != ";" || units.Type != "number" || units.Count != 2 || units.Missing != 1 || units.Mean != 4 ||
		price.Max != 1200.5 || region.Type != "text" || region.Distinct != 2 || region.Top[0].Value != "north" {
		t.Fatalf("result %s", res.Result)
	}
	if _, err := rt.Run(ctx, run.Request{Skill: "csv-stats", Args: []byte(`{"file":"/etc/passwd"}`), Who: testAdmin}); !errors.Is(err, run.ErrPermissionDenied) {
		t.Fatalf("a file outside the grant: %v", err)
	}
	res, err = rt.Run(ctx, run.Request{Skill: "csv-stats", Args: []byte(`{}`), Who: testAdmin})
	if err == nil || !strings.Contains(res.Error.Message, "give the table as csv") {
		t.Fatalf("neither csv nor file: %v", err)
	}
}

// The bundled instruction skill's program prints a table of contents of the document on stdin.
func TestBundledMarkdownTOC(t *testing.T) {
	rt := newRuntime(t, Config{SkillDirs: []string{"../skills"}})
	doc := "# Title\n\n## Install it\n\n```sh\n# not a heading\n```\n\n### Linux & macOS\n\n## Install it\n"
	res, err := rt.Run(context.Background(), run.Request{Skill: "markdown-toc", Script: "toc.py", Argv: []string{"--skip-first"}, Stdin: []byte(doc), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	var out run.ProgramOutput
	must(t, json.Unmarshal(res.Result, &out))
	if out.ExitCode != 0 || out.Stdout != "- [Install it](#install-it)\n  - [Linux & macOS](#linux--macos)\n- [Install it](#install-it-1)\n" {
		t.Fatalf("%+v", out)
	}
}
