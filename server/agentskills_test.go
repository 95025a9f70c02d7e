package server

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// agentSkillsEnv serves solo (only a SKILL.md), multi (a SKILL.md, a reference and an executable
// script), renamed (a name that is not its id) and sloppy (YAML only a lenient reader takes).
func agentSkillsEnv(t *testing.T) *testEnv {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"solo/SKILL.md":               "---\nname: solo\ndescription: One file.\n---\n\n# Solo\n",
		"multi/SKILL.md":              "---\nname: multi\ndescription: >\n  Several files.\nlicense: MIT\n---\n\nSee references/a.md.\n",
		"multi/references/a.md":       "# A\n",
		"multi/scripts/run.sh":        "#!/bin/sh\necho run\n",
		"multi/.hidden":               "secret",
		"renamed/SKILL.md":            "---\nname: other\ndescription: Renamed.\n---\n",
		"sloppy/SKILL.md":             "---\nname: sloppy\ndescription: Use it: always\n---\n",
		"not-instructions/notes.txt":  "no SKILL.md here",
		"not-instructions/skill.json": manifestJSON("not-instructions", ""),
	})
	if err := os.Chmod(filepath.Join(dir, "multi", "scripts", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	return newEnv(t, Options{}, dir)
}

func TestAgentSkillsIndex(t *testing.T) {
	t.Parallel()
	env := agentSkillsEnv(t)
	base := env.ts.URL + "/.well-known/agent-skills/index.json"
	r := get(t, base)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("index: %v %v", r, r.header)
	}
	var idx struct {
		Schema string `json:"$schema"`
		Skills []struct {
			Name, Type, Description, URL, Digest string
		}
	}
	r.decode(t, &idx)
	if idx.Schema != "https://schemas.agentskills.io/discovery/0.2.0/schema.json" {
		t.Errorf("$schema %q", idx.Schema)
	}
	var names []string
	for _, e := range idx.Skills {
		names = append(names, e.Name+":"+e.Type)
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := url.Parse(e.URL)
		if err != nil || ref.IsAbs() || strings.HasPrefix(e.URL, "/") {
			t.Errorf("%s: url %q is not relative to the index", e.Name, e.URL)
		}
		art := get(t, u.ResolveReference(ref).String())
		if art.status != http.StatusOK || sha256Digest(art.body) != e.Digest {
			t.Errorf("%s: %s served %d, digest %s; the index says %s", e.Name, e.URL, art.status, sha256Digest(art.body), e.Digest)
		}
		switch e.Type {
		case "skill-md":
			disk, _ := os.ReadFile(filepath.Join(env.dir, e.Name, "SKILL.md"))
			if !bytes.Equal(art.body, disk) || art.header.Get("Content-Type") != "text/markdown; charset=utf-8" {
				t.Errorf("%s: %s %q", e.Name, art.header.Get("Content-Type"), art.body)
			}
		case "archive":
			if art.header.Get("Content-Type") != "application/gzip" {
				t.Errorf("%s: %s", e.Name, art.header.Get("Content-Type"))
			}
			checkArchive(t, art.body, filepath.Join(env.dir, e.Name), map[string]int64{"SKILL.md": 0o644, "references/a.md": 0o644, "scripts/run.sh": 0o755})
		}
	}
	if !slices.Equal(names, []string{"multi:archive", "solo:skill-md"}) {
		t.Errorf("index skills %v: want multi and solo, not renamed (name is not its id), sloppy (strict YAML refuses it) or not-instructions", names)
	}
	if idx.Skills[0].Description != "Several files.\n" {
		t.Errorf("description %q: want the frontmatter's, as written", idx.Skills[0].Description)
	}

	// A change to a file is a new archive, and a new digest in the index.
	first := idx.Skills[0].Digest
	a := filepath.Join(env.dir, "multi", "references", "a.md")
	if err := os.WriteFile(a, []byte("# B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	_ = os.Chtimes(a, later, later)
	get(t, base).decode(t, &idx)
	if idx.Skills[0].Digest == first || sha256Digest(get(t, env.ts.URL+"/.well-known/agent-skills/multi.tar.gz").body) != idx.Skills[0].Digest {
		t.Errorf("after a change, digest %s (was %s) does not match the archive served", idx.Skills[0].Digest, first)
	}

	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{"renamed/SKILL.md", 404, `the name \"other\" differs from the skill's id \"renamed\"`},
		{"sloppy/SKILL.md", 404, "mapping values are not allowed"},
		{"nope/SKILL.md", 404, `no skill \"nope\"`},
		{"not-instructions/SKILL.md", 404, "has no SKILL.md"},
		{"nope.tar.gz", 404, `no skill \"nope\"`},
		{"multi.zip", 404, "archives are \\u003cname\\u003e.tar.gz"},
	} {
		r := get(t, env.ts.URL+"/.well-known/agent-skills/"+c.path)
		if r.status != c.status || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %v, want %d saying %s", c.path, r, c.status, c.want)
		}
	}
	if r := send(t, http.MethodHead, base, nil); r.status != http.StatusOK || len(r.body) != 0 {
		t.Errorf("HEAD index: %v", r)
	}
}

// checkArchive checks a .tar.gz holds exactly the files of dir named in modes, at its root, with
// those modes.
func checkArchive(t *testing.T, data []byte, dir string, modes map[string]int64) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		disk, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(h.Name)))
		mode, ok := modes[h.Name]
		if !ok || !bytes.Equal(body, disk) || h.Mode != mode {
			t.Errorf("archive entry %s (mode %o): %q, disk %q", h.Name, h.Mode, body, disk)
		}
		seen[h.Name] = true
	}
	if len(seen) != len(modes) {
		t.Errorf("archive entries %v, want %v", seen, modes)
	}
}

// TestAgentSkillsRedirects checks /.well-known/agent-skills leads to the index, under a mount
// prefix too.
func TestAgentSkillsRedirects(t *testing.T) {
	t.Parallel()
	env := agentSkillsEnv(t)
	e := echo.New()
	env.srv.Mount(e.Group("/api"))
	mounted := httptest.NewServer(e)
	defer mounted.Close()
	for _, u := range []string{env.ts.URL + "/.well-known/agent-skills", env.ts.URL + "/.well-known/agent-skills/",
		mounted.URL + "/api/.well-known/agent-skills", mounted.URL + "/api/.well-known/agent-skills/"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasSuffix(resp.Request.URL.Path, "/.well-known/agent-skills/index.json") ||
			!strings.HasPrefix(resp.Request.URL.String(), strings.TrimSuffix(strings.TrimSuffix(u, "/"), "agent-skills")) {
			t.Errorf("%s: %s at %s", u, resp.Status, resp.Request.URL)
		}
	}
	if r := get(t, mounted.URL+"/api/.well-known/agent-skills/solo/SKILL.md"); r.status != http.StatusOK {
		t.Errorf("mounted artifact: %v", r)
	}
}

// TestAgentSkillsMatchesMCP checks the index and the MCP Skills extension's skills/list publish
// the same skills with the same digests of SKILL.md, over the same server.
func TestAgentSkillsMatchesMCP(t *testing.T) {
	t.Parallel()
	env := agentSkillsEnv(t)
	var idx struct {
		Skills []struct{ Name, Type, URL, Digest string }
	}
	get(t, env.ts.URL+"/.well-known/agent-skills/index.json").decode(t, &idx)

	mcpPost := func(body string, header ...string) reply {
		t.Helper()
		return post(t, env.ts.URL+"/mcp", body, append([]string{"Accept", "application/json, text/event-stream"}, header...)...)
	}
	init := mcpPost(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := init.header.Get("Mcp-Session-Id")
	if init.status != http.StatusOK || session == "" {
		t.Fatalf("initialize: %v", init)
	}
	mcpPost(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", session)
	r := mcpPost(`{"jsonrpc":"2.0","id":2,"method":"skills/list"}`, "Mcp-Session-Id", session, "Mcp-Protocol-Version", "2025-11-25")
	var list struct {
		Result struct {
			Skills []struct {
				Frontmatter struct{ Name string }
				Resources   []struct{ URI, Digest string }
			}
		}
	}
	body := r.body
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		for sc := bufio.NewScanner(bytes.NewReader(r.body)); sc.Scan(); {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				body = []byte(line)
			}
		}
	}
	if err := json.Unmarshal(body, &list); err != nil || r.status != http.StatusOK {
		t.Fatalf("skills/list: %v %v", err, r)
	}
	var fromMCP, fromIndex []string
	for _, s := range list.Result.Skills {
		fromMCP = append(fromMCP, s.Frontmatter.Name)
	}
	for _, s := range idx.Skills {
		fromIndex = append(fromIndex, s.Name)
		if s.Type == "skill-md" && list.Result.Skills[len(fromIndex)-1].Resources[0].Digest != s.Digest {
			t.Errorf("%s: SKILL.md digests differ", s.Name)
		}
	}
	if !slices.Equal(fromMCP, fromIndex) {
		t.Errorf("skills/list %v, index %v: want the same skills", fromMCP, fromIndex)
	}
}
