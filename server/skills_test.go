package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/runtime"
)

const docsSkillMD = "---\nname: docs\ndescription: A skill with instructions and resources.\nallowed-tools: Read, Grep\n---\n\n# Docs\n\nLook up $ARGUMENTS in resources/x.md.\nThen say $ARGUMENTS again.\n"

// docsEnv has an executable skill "docs" with a SKILL.md, resources (one with a name that needs
// escaping), a hidden file and a symlink out; an instructions-only skill "guide"; a broken skill;
// a secret next to the skills and one outside them. The bundled skills come second.
func docsEnv(t *testing.T) (*testEnv, string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "skills")
	fixture(t, dir, "docs", manifestJSON("docs", `"version":"2.1.0","tags":["docs"],"parameters":{"q":{"type":"string","required":true}}`), "echo", map[string]string{
		"SKILL.md":                   docsSkillMD,
		"resources/x.md":             "# X\nthe x resource\n",
		"resources/sub/y.txt":        "why\n",
		"resources/my notes (v2).md": "notes v2\n",
		"resources/.env":             "TOPSECRET=1\n",
		"src/main.go":                "package main\n",
	})
	writeFiles(t, root, map[string]string{"outside.txt": "TOPSECRET outside\n"})
	writeFiles(t, dir, map[string]string{"secret.txt": "TOPSECRET next door\n"})
	if err := os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(dir, "docs", "resources", "evil.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("x.md", filepath.Join(dir, "docs", "resources", "alias.md")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"guide/SKILL.md": "---\nname: guide\ndescription: How to write a good guide.\n---\n\nWrite it for $ARGUMENTS.\n"})
	fixture(t, dir, "broken", manifestJSON("broken", `"colour":"red","limits":{"timeoutMs":"soon"}`), "hello", nil)
	return newEnv(t, Options{}, dir, "../skills"), dir
}

var summaryKeys = map[string]bool{"id": true, "name": true, "description": true, "version": true, "tags": true, "kind": true, "language": true, "status": true, "error": true, "allowed_tools": true}

func TestListSkillsIsMetadataOnly(t *testing.T) {
	t.Parallel()
	env, _ := docsEnv(t)
	r := get(t, env.ts.URL+"/v1/skills")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatal(r)
	}
	var list struct {
		Skills []map[string]any `json:"skills"`
	}
	r.decode(t, &list)
	byID := map[string]map[string]any{}
	var ids []string
	for _, s := range list.Skills {
		for k := range s {
			if !summaryKeys[k] {
				t.Errorf("skill %v lists %q: the list is metadata only", s["id"], k)
			}
		}
		id, _ := s["id"].(string)
		ids = append(ids, id)
		byID[id] = s
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("not ordered by id: %v", ids)
	}
	want := append([]string{"broken", "docs", "guide"}, bundledIDs(t)...)
	sort.Strings(want)
	if !slices.Equal(ids, want) {
		t.Errorf("lists %v, want the test's skills and every bundled one: %v", ids, want)
	}
	tests := []struct {
		id                              string
		name, description, kind, status string
		version                         string
		errorContains                   string
		language                        string
	}{
		// Executable skills no one ran are unchecked: the list reads manifests only.
		{"docs", "docs", "test skill docs", "executable", "unchecked", "2.1.0", "", "wasm"},
		{"guide", "guide", "How to write a good guide.", "instructions", "active", "", "", ""}, // an instruction skill runs nothing
		{"broken", "broken", "", "executable", "error", "", "colour", "wasm"},                  // no manifest parsed: no description
		{"word-count", "Word count", "Counts the words, lines and characters of a text and lists its most frequent words.", "executable", "unchecked", "1.0.0", "", "wasm"},
		{"hello", "Hello", "", "executable", "unchecked", "1.0.0", "", "wasm"},
		{"github-issues", "GitHub issues", "", "executable", "unchecked", "1.0.0", "", "typescript"},
	}
	for _, tc := range tests {
		s, ok := byID[tc.id]
		if !ok {
			t.Errorf("%s is not listed: %v", tc.id, ids)
			continue
		}
		str := func(k string) string { v, _ := s[k].(string); return v }
		if str("name") != tc.name || (tc.description != "" && str("description") != tc.description) || str("kind") != tc.kind ||
			str("status") != tc.status || str("version") != tc.version || !strings.Contains(str("error"), tc.errorContains) ||
			str("language") != tc.language {
			t.Errorf("%s: %v", tc.id, s)
		}
	}
}

func TestSkillDetail(t *testing.T) {
	t.Parallel()
	env, _ := docsEnv(t)
	type detail struct {
		runtime.Summary
		Entrypoint string          `json:"entrypoint"`
		SHA256     string          `json:"sha256"`
		Parameters json.RawMessage `json:"parameters"`
		Requested  *struct {
			Files []struct{ Path, Access string } `json:"files"`
		} `json:"requested"`
		RequestedLimits map[string]int64 `json:"requested_limits"`
		Granted         *struct {
			Network []string                        `json:"network"`
			Files   []struct{ Path, Access string } `json:"files"`
			Limits  map[string]int64                `json:"limits"`
			Refused []string                        `json:"refused"`
		} `json:"granted"`
		Problems     []string `json:"problems"`
		Instructions bool     `json:"instructions"`
		Resources    []string `json:"resources"`
	}
	fetch := func(t *testing.T, id string) (detail, map[string]json.RawMessage) {
		r := get(t, env.ts.URL+"/v1/skills/"+id)
		if r.status != 200 {
			t.Fatal(r)
		}
		var d detail
		var raw map[string]json.RawMessage
		r.decode(t, &d)
		r.decode(t, &raw)
		if id != "broken" && strings.Contains(string(r.body), env.dir) {
			t.Errorf("the detail shows a host path: %s", r.body)
		}
		return d, raw
	}
	hasSkillMount := func(d detail) bool {
		for _, f := range d.Granted.Files {
			if f.Path == "/skill" && f.Access == "read-only" {
				return true
			}
		}
		return false
	}

	t.Run("bundled word-count", func(t *testing.T) {
		d, raw := fetch(t, "word-count")
		for _, k := range []string{"parameters", "requested", "granted", "resources", "instructions"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("no %q", k)
			}
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(d.Parameters, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil ||
			schema.Properties["top"] == nil || strings.Join(schema.Required, ",") != "text" {
			t.Errorf("parameters %s", d.Parameters)
		}
		if d.Granted == nil || !hasSkillMount(d) {
			t.Errorf("granted.files lacks /skill read-only: %s", raw["granted"])
		}
		if len(d.SHA256) != 64 || d.Entrypoint != "execute" || !d.Instructions || d.Resources == nil || len(d.Resources) != 0 {
			t.Errorf("detail %+v", d)
		}
		if d.Granted.Limits["timeoutMs"] != 10000 {
			t.Errorf("granted limits %v", d.Granted.Limits)
		}
	})
	t.Run("requested vs granted", func(t *testing.T) {
		d, raw := fetch(t, "notes")
		if d.Requested == nil || len(d.Requested.Files) != 1 || d.Requested.Files[0].Path != "/workspace/notes" {
			t.Errorf("requested %s", raw["requested"])
		}
		// The default policy grants no files: the request is refused, and said so.
		if d.Granted == nil || len(d.Granted.Refused) == 0 || !strings.Contains(strings.Join(d.Granted.Refused, "\n"), "/workspace/notes") {
			t.Errorf("granted %s", raw["granted"])
		}
		if !hasSkillMount(d) {
			t.Errorf("no /skill mount: %s", raw["granted"])
		}
	})
	t.Run("resources are listed", func(t *testing.T) {
		d, _ := fetch(t, "docs")
		// Not listed: SKILL.md, skill.json, execute.wasm, src/, hidden files, the symlink out.
		want := []string{"resources/alias.md", "resources/my notes (v2).md", "resources/sub/y.txt", "resources/x.md"}
		if strings.Join(d.Resources, "|") != strings.Join(want, "|") {
			t.Errorf("resources %q, want %q", d.Resources, want)
		}
		if d.Version != "2.1.0" || strings.Join(d.Tags, ",") != "docs" {
			t.Errorf("detail %+v", d)
		}
	})
	t.Run("instructions-only", func(t *testing.T) {
		d, raw := fetch(t, "guide")
		if d.Kind != "instructions" || d.Name != "guide" || d.Description != "How to write a good guide." || !d.Instructions {
			t.Errorf("detail %+v", d)
		}
		if _, ok := raw["parameters"]; ok {
			t.Errorf("an instructions skill has parameters: %s", raw["parameters"])
		}
	})
	t.Run("broken lists every problem", func(t *testing.T) {
		d, _ := fetch(t, "broken")
		all := strings.Join(d.Problems, "\n")
		if d.Status != "error" || len(d.Problems) < 2 || !strings.Contains(all, "colour") || !strings.Contains(all, "timeoutMs") {
			t.Errorf("problems %q", d.Problems)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		wantError(t, get(t, env.ts.URL+"/v1/skills/nope"), 404, "not_found")
		wantError(t, get(t, env.ts.URL+"/v1/skills/NOPE"), 404, "not_found")
	})
}

func TestInstructions(t *testing.T) {
	t.Parallel()
	env, dir := docsEnv(t)
	// A remote client's base directory is where the API serves the skill's files, never the
	// host's path.
	absDocs := "/v1/skills/docs/resources/"
	bundledHello := "/v1/skills/hello/resources/"
	rawBody := "# Docs\n\nLook up $ARGUMENTS in resources/x.md.\nThen say $ARGUMENTS again.\n"
	tests := []struct {
		name, path, accept string // given
		status             int    // expect
		ctype              string
		body               string // exact markdown, or the JSON "content"
	}{
		{"raw markdown, file untouched", "/v1/skills/docs/instructions", "", 200, "text/markdown", rawBody},
		{"with arguments", "/v1/skills/docs/instructions?arguments=Ada+Lovelace", "", 200, "text/markdown",
			"Base directory for this skill: " + absDocs + "\n\n# Docs\n\nLook up Ada Lovelace in resources/x.md.\nThen say Ada Lovelace again.\n"},
		{"with empty arguments", "/v1/skills/docs/instructions?arguments=", "", 200, "text/markdown",
			"Base directory for this skill: " + absDocs + "\n\n# Docs\n\nLook up  in resources/x.md.\nThen say  again.\n"},
		{"arguments are not re-expanded", "/v1/skills/docs/instructions?arguments=%24ARGUMENTS", "", 200, "text/markdown",
			"Base directory for this skill: " + absDocs + "\n\n# Docs\n\nLook up $ARGUMENTS in resources/x.md.\nThen say $ARGUMENTS again.\n"},
		{"JSON", "/v1/skills/docs/instructions", "application/json", 200, "application/json", rawBody},
		{"JSON with arguments", "/v1/skills/docs/instructions?arguments=x", "application/json", 200, "application/json",
			"Base directory for this skill: " + absDocs + "\n\n# Docs\n\nLook up x in resources/x.md.\nThen say x again.\n"},
		{"no placeholder: arguments appended", "/v1/skills/hello/instructions?arguments=Ada", "", 200, "text/markdown", "\n\nARGUMENTS: Ada"},
		{"instructions-only skill", "/v1/skills/guide/instructions?arguments=you", "", 200, "text/markdown", "Write it for you.\n"},
		{"no SKILL.md", "/v1/skills/broken/instructions", "", 404, "", ""},
		{"unknown skill", "/v1/skills/nope/instructions", "", 404, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := get(t, env.ts.URL+tc.path, "Accept", tc.accept)
			if tc.status != 200 {
				wantError(t, r, tc.status, "not_found")
				return
			}
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), tc.ctype) {
				t.Fatalf("%s (Content-Type %q)", r, r.header.Get("Content-Type"))
			}
			got := string(r.body)
			if tc.ctype == "application/json" {
				var j struct {
					ID, Name, Description, Content string
					AllowedTools                   []string `json:"allowed_tools"`
				}
				r.decode(t, &j)
				if j.ID != "docs" || j.Name != "docs" || j.Description == "" || strings.Join(j.AllowedTools, ",") != "Read,Grep" {
					t.Errorf("JSON %s", r.body)
				}
				got = j.Content
			}
			if hostDir, _ := filepath.Abs(dir); strings.Contains(got, hostDir) {
				t.Errorf("the host's path reached a remote client: %q", got)
			}
			switch tc.name {
			case "no placeholder: arguments appended":
				if !strings.HasPrefix(got, "Base directory for this skill: "+bundledHello+"\n\n") || !strings.HasSuffix(got, tc.body) {
					t.Errorf("got %q", got)
				}
			case "instructions-only skill":
				if !strings.HasPrefix(got, "Base directory for this skill: ") || !strings.HasSuffix(got, tc.body) {
					t.Errorf("got %q", got)
				}
			default:
				if got != tc.body {
					t.Errorf("got\n%q\nwant\n%q", got, tc.body)
				}
			}
		})
	}
	// The file on disk is never modified.
	if data, _ := os.ReadFile(filepath.Join(dir, "docs", "SKILL.md")); string(data) != docsSkillMD {
		t.Errorf("SKILL.md changed: %q", data)
	}
}

// A resource path comes from a model or a client: nothing outside the skill's directory may be
// read, however the path is spelled.
func TestResources(t *testing.T) {
	t.Parallel()
	env, _ := docsEnv(t)
	base := env.ts.URL + "/v1/skills/docs/resources/"
	tests := []struct {
		name, rel string // given: the raw path after .../resources/
		status    int    // expect
		code      string
		body      string // exact body for 200
		ctype     string
	}{
		{"markdown", "resources/x.md", 200, "", "# X\nthe x resource\n", "text/markdown"},
		{"nested text", "resources/sub/y.txt", 200, "", "why\n", "text/plain"},
		{"symlink inside is followed", "resources/alias.md", 200, "", "# X\nthe x resource\n", "text/markdown"},
		{"name escaped as Go does", "resources/my%20notes%20%28v2%29.md", 200, "", "notes v2\n", "text/markdown"},
		{"dot segments inside", "resources/./sub//y.txt", 200, "", "why\n", "text/plain"},
		{"the manifest is readable", "skill.json", 200, "", "", "text/plain"},

		{"dot-dot", "../secret.txt", 400, "bad_path", "", ""},
		{"dot-dot deeper", "resources/../../secret.txt", 400, "bad_path", "", ""},
		{"dot-dot to the parent of skills", "../../outside.txt", 400, "bad_path", "", ""},
		// Decoded, then refused like their plain forms.
		{"encoded dot-dot", "%2e%2e/secret.txt", 400, "bad_path", "", ""},
		{"encoded dot-dot and slash", "%2e%2e%2fsecret.txt", 400, "bad_path", "", ""},
		{"encoded slash", "..%2Fsecret.txt", 0, "", "", ""},
		{"absolute", "/etc/passwd", 400, "bad_path", "", ""},
		{"encoded absolute", "%2Fetc%2Fpasswd", 400, "bad_path", "", ""},
		{"backslash", `..%5Csecret.txt`, 400, "bad_path", "", ""},
		{"NUL", "resources/x.md%00.txt", 400, "bad_path", "", ""},
		{"hidden file", "resources/.env", 400, "bad_path", "", ""},
		{"symlink out", "resources/evil.md", 400, "bad_path", "", ""},
		{"a directory", "resources", 400, "bad_path", "", ""},
		{"empty", "", 400, "bad_path", "", ""},
		{"missing", "resources/none.md", 404, "not_found", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := get(t, base+tc.rel)
			if strings.Contains(string(r.body), "TOPSECRET") || strings.Contains(string(r.body), "root:") {
				t.Fatalf("LEAK: %s", r.body)
			}
			switch {
			case tc.status == 0: // either refused or not found, as long as it is not served
				if r.status != 400 && r.status != 404 {
					t.Errorf("%s, want 400 or 404", r)
				}
				wantError(t, r, r.status, "")
				return
			case tc.status != 200:
				wantError(t, r, tc.status, tc.code)
				return
			case r.status != 200:
				t.Fatal(r)
			}
			if tc.body != "" && string(r.body) != tc.body {
				t.Errorf("body %q", r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, tc.ctype) {
				t.Errorf("Content-Type %q, want %s", ct, tc.ctype)
			}
			if r.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("no nosniff")
			}
		})
	}
	t.Run("unknown skill", func(t *testing.T) {
		wantError(t, get(t, env.ts.URL+"/v1/skills/nope/resources/x.md"), 404, "not_found")
		r := get(t, env.ts.URL+"/v1/skills/..%2F..%2Fetc/resources/passwd")
		if r.status == 200 || strings.Contains(string(r.body), "root:") {
			t.Errorf("traversal through the id: %s", r)
		}
	})
}

// A client that escapes a resource's name the way curl users and JavaScript's
// encodeURIComponent do (spaces as %20, parentheses and commas left as they are or escaped
// differently from Go) must still get the resource the detail listed.
func TestResourceNamesEscapedByOtherClients(t *testing.T) {
	t.Parallel()
	env, _ := docsEnv(t)
	// the file "resources/my notes (v2).md", as encodeURIComponent and curl users write it
	for _, rel := range []string{"resources/my%20notes%20(v2).md", "resources%2Fmy%20notes%20(v2).md", "resources/my%20notes%20%28v2%29.md"} {
		r := get(t, env.ts.URL+"/v1/skills/docs/resources/"+rel)
		if rel == "resources/my%20notes%20%28v2%29.md" {
			if r.status != 200 {
				t.Fatalf("%s: %s", rel, r)
			}
			continue
		}
		if r.status != 200 {

			t.Errorf("%s: %s", rel, r)
		}
	}
}

func TestInstructionsOnlySkillIsNotRunnable(t *testing.T) {
	t.Parallel()
	env, _ := docsEnv(t)
	wantError(t, post(t, env.ts.URL+"/v1/skills/guide/runs", `{}`), 404, "not_found")
	wantError(t, post(t, env.ts.URL+"/v1/runs", `{"skill":"guide"}`), 404, "not_found")
	r := get(t, env.ts.URL+"/v1/tools?format=anthropic")
	if r.status != 200 || strings.Contains(string(r.body), "skill_guide") {
		t.Errorf("an instructions skill offered as a tool: %s", r)
	}
	r = get(t, env.ts.URL+"/v1/skills/guide/resources/SKILL.md")
	if r.status != 200 || !strings.Contains(string(r.body), "name: guide") {
		t.Errorf("SKILL.md as a resource: %s", r)
	}
}

// A broken skill's problems reach a remote client with paths relative to the skills directory:
// the hint to build a missing module, a manifest problem, never the host's layout.
func TestBrokenSkillProblemsHideHostPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"nomodule/skill.json": manifestJSON("nomodule", ""),
		"badfield/skill.json": manifestJSON("badfield", `"colour":"red"`),
	})
	env := newEnv(t, Options{}, dir)
	abs, _ := filepath.Abs(dir)
	for _, path := range []string{"/v1/skills", "/v1/skills/nomodule", "/v1/skills/badfield"} {
		r := get(t, env.ts.URL+path)
		if r.status != 200 {
			t.Fatalf("%s: %s", path, r)
		}
		if strings.Contains(string(r.body), abs) || strings.Contains(string(r.body), dir) {
			t.Errorf("%s names the host's directory: %s", path, r.body)
		}
	}
	if r := get(t, env.ts.URL+"/v1/skills/nomodule"); !strings.Contains(string(r.body), "nomodule/execute.wasm") || !strings.Contains(string(r.body), "skillbox build nomodule") {
		t.Errorf("problems do not name the files relative to the skills directory: %s", r.body)
	}
}
