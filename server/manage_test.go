package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle/bundletest"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// pkg is a skill package: its files by package path.
type pkg map[string][]byte

func greeterPkg(t testing.TB, version, wasm string) pkg {
	return pkg{
		"skill.json":     []byte(manifestJSON("greeter", `"version":"`+version+`","parameters":{"type":"object"}`)),
		"execute.wasm":   wasmFixture(t, wasm),
		"SKILL.md":       []byte("---\nname: greeter\ndescription: Greets.\n---\n\nGreet $ARGUMENTS.\n"),
		"resources/x.md": []byte("x " + version + "\n"),
	}
}

// upload sends p as multipart (fields: extra form fields) with method to url.
func upload(t testing.TB, method, url string, p pkg, fields map[string]string, header ...string) reply {
	t.Helper()
	body, ctype := multipartBody(t, p, fields)
	return send(t, method, url, body, append([]string{"Content-Type", ctype}, header...)...)
}

// uploadTar sends entries as a .tar.gz.
func uploadTar(t testing.TB, method, url string, entries []bundletest.Entry, header ...string) reply {
	t.Helper()
	return send(t, method, url, bytes.NewReader(bundletest.TarGz(t, entries...)), append([]string{"Content-Type", "application/gzip"}, header...)...)
}

// tarOf lists p's files under the top-level directory top ("" for none).
func tarOf(p pkg, top string) []bundletest.Entry {
	var out []bundletest.Entry
	if top != "" {
		out = append(out, bundletest.Entry{Name: top + "/", Type: tar.TypeDir})
	}
	for name, data := range p {
		if top != "" {
			name = top + "/" + name
		}
		out = append(out, bundletest.Entry{Name: name, Data: data})
	}
	return out
}

// leftovers lists what is in dir besides the given skill directories: staging or trash that an
// install or remove left behind.
func leftovers(t testing.TB, dir string, skills ...string) []string {
	t.Helper()
	want := map[string]bool{}
	for _, s := range skills {
		want[s] = true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range ents {
		if !want[e.Name()] {
			extra = append(extra, e.Name())
		}
	}
	return extra
}

func TestCreateSkill(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	url := env.ts.URL + "/v1/skills"

	r := upload(t, "POST", url, greeterPkg(t, "1.0.0", "echo"), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %s", r)
	}
	var s runtime.Summary
	r.decode(t, &s)
	if s.ID != "greeter" || s.Kind != "executable" || s.Status != "active" || s.Version != "1.0.0" {
		t.Errorf("created %+v", s)
	}
	// It runs, lists its resource, serves its instructions, and is a tool.
	res := runResult(t, post(t, env.ts.URL+"/v1/skills/greeter/runs", `{"args":{"a":1}}`))
	if !res.Success || string(res.Result) != `{"a":1}` || res.Version != "1.0.0" {
		t.Errorf("run %+v", res)
	}
	if r := get(t, env.ts.URL+"/v1/skills/greeter/resources/resources/x.md"); r.status != 200 || string(r.body) != "x 1.0.0\n" {
		t.Errorf("resource %s", r)
	}
	if r := get(t, env.ts.URL+"/v1/skills/greeter/instructions?arguments=Ada"); r.status != 200 || !strings.HasSuffix(string(r.body), "Greet Ada.\n") {
		t.Errorf("instructions %s", r)
	}
	if r := get(t, env.ts.URL+"/v1/tools"); !strings.Contains(string(r.body), "skill_greeter") {
		t.Errorf("tools %s", r)
	}
	if _, err := os.Stat(filepath.Join(env.dir, "greeter", "execute.wasm")); err != nil {
		t.Errorf("not on disk: %v", err)
	}

	// Again: 409, and the first version is untouched.
	r = upload(t, "POST", url, greeterPkg(t, "9.9.9", "hello"), nil)
	wantError(t, r, http.StatusConflict, "exists")
	if res := runResult(t, post(t, env.ts.URL+"/v1/runs", `{"skill":"greeter","input":{"b":2}}`)); res.Version != "1.0.0" || string(res.Result) != `{"b":2}` {
		t.Errorf("after the 409: %+v", res)
	}
	// The same id as an existing fixture, through the id field: 409 too.
	r = upload(t, "POST", url, pkg{"SKILL.md": []byte("---\nname: hello\ndescription: d\n---\nx\n")}, map[string]string{"id": "hello"})
	wantError(t, r, http.StatusConflict, "exists")

	// An instructions-only package needs the id field.
	r = upload(t, "POST", url, pkg{"SKILL.md": []byte("---\nname: howto\ndescription: How to.\n---\n\nDo it.\n")}, map[string]string{"id": "howto"})
	r.decode(t, &s)
	if r.status != http.StatusCreated || s.Kind != "instructions" || s.Description != "How to." {
		t.Errorf("instructions-only create: %s", r)
	}
	// A .tar.gz creates too.
	tgz := greeterPkg(t, "1.0.0", "hello")
	tgz["skill.json"] = []byte(manifestJSON("tarred", `"version":"3.0.0"`))
	r = uploadTar(t, "POST", url, tarOf(tgz, "tarred"))
	if r.status != http.StatusCreated {
		t.Errorf("tar create: %s", r)
	}
	if extra := leftovers(t, env.dir, "hello", "echo", "loop", "greeter", "howto", "tarred"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
}

func TestCreateSkillRefused(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	url := env.ts.URL + "/v1/skills"
	good := func() pkg { return greeterPkg(t, "1.0.0", "hello") }
	with := func(p pkg, name string, data []byte) pkg {
		if data == nil {
			delete(p, name)
		} else {
			p[name] = data
		}
		return p
	}
	tests := []struct {
		name    string
		p       pkg               // given: the files
		fields  map[string]string // and form fields
		ctype   string            // or a raw body of this content type
		raw     string
		status  int      // expect
		code    string   //
		details []string // each in some detail
	}{
		{name: "every manifest problem", p: with(good(), "skill.json", []byte(`{"id":"greeter","name":"g","colour":"red","tags":"x","limits":{"timeoutMs":-5}}`)),
			status: 422, code: "invalid_skill", details: []string{"colour", "description", "tags", "timeoutMs"}},
		{name: "not a module", p: with(good(), "execute.wasm", []byte("MZ not wasm")), status: 422, code: "invalid_skill", details: []string{"WebAssembly"}},
		{name: "no module", p: with(good(), "execute.wasm", nil), status: 422, code: "invalid_skill", details: []string{"execute.wasm"}},
		{name: "no entrypoint", p: with(good(), "execute.wasm", wasmFixture(t, "noexport")), status: 422, code: "invalid_skill", details: []string{`"execute"`}},
		{name: "a file outside the package layout", p: with(good(), "run.sh", []byte("#!/bin/sh")), status: 422, code: "invalid_skill", details: []string{"run.sh"}},
		{name: "dot-dot field name", p: with(good(), "../escape.json", []byte("{}")), status: 422, code: "invalid_skill", details: []string{"../escape.json"}},
		{name: "dot-dot inside resources", p: with(good(), "resources/../../escape.md", []byte("x")), status: 422, code: "invalid_skill", details: []string{"escape.md"}},
		{name: "absolute field name", p: with(good(), "/tmp/escape.md", []byte("x")), status: 422, code: "invalid_skill", details: []string{"/tmp/escape.md"}},
		{name: "hidden resource", p: with(good(), "resources/.env", []byte("A=1")), status: 422, code: "invalid_skill", details: []string{"resources/.env"}},
		{name: "two manifests", p: with(good(), "skill.yaml", []byte("id: greeter\n")), status: 422, code: "invalid_skill", details: []string{"manifest"}},
		{name: "id field differs from the manifest", p: good(), fields: map[string]string{"id": "other"}, status: 422, code: "invalid_skill", details: []string{"greeter"}},
		{name: "invalid id field", p: with(good(), "skill.json", nil), fields: map[string]string{"id": "Bad_ID"}, status: 422, code: "invalid_skill", details: []string{"Bad_ID"}},
		{name: "no id at all", p: pkg{"execute.wasm": wasmFixture(t, "hello")}, status: 422, code: "invalid_skill"},
		{name: "nothing", p: pkg{}, status: 422, code: "invalid_skill"},
		{name: "malformed multipart", ctype: "multipart/form-data; boundary=xyz", raw: "--abc\r\nnot a part", status: 400, code: "bad_request"},
		{name: "multipart without boundary", ctype: "multipart/form-data", raw: "x", status: 400, code: "bad_request"},
		{name: "JSON", ctype: "application/json", raw: `{"id":"greeter"}`, status: 415, code: "unsupported_media_type"},
		{name: "no content type", ctype: "-", raw: `x`, status: 415, code: "unsupported_media_type"},
		{name: "url-encoded form", ctype: "application/x-www-form-urlencoded", raw: `skill.json=x`, status: 415, code: "unsupported_media_type"},
		{name: "gzip that is not gzip", ctype: "application/gzip", raw: "plain text", status: 400, code: "bad_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r reply
			switch {
			case tc.ctype == "-":
				r = send(t, "POST", url, strings.NewReader(tc.raw))
			case tc.ctype != "":
				r = send(t, "POST", url, strings.NewReader(tc.raw), "Content-Type", tc.ctype)
			default:
				r = upload(t, "POST", url, tc.p, tc.fields)
			}
			e := wantError(t, r, tc.status, tc.code)
			all := strings.Join(e.Error.Details, "\n")
			for _, d := range tc.details {
				if !strings.Contains(all, d) {
					t.Errorf("details %q do not mention %q", e.Error.Details, d)
				}
			}
			if len(tc.details) > 1 && len(e.Error.Details) < len(tc.details) {
				t.Errorf("%d details for %d problems: %q", len(e.Error.Details), len(tc.details), e.Error.Details)
			}
		})
	}
	// Nothing was installed, nothing left behind, nothing written outside.
	if r := get(t, env.ts.URL+"/v1/skills/greeter"); r.status != 404 {
		t.Errorf("a refused package was installed: %s", r)
	}
	if r := get(t, env.ts.URL+"/v1/skills/other"); r.status != 404 {
		t.Errorf("a refused package was installed: %s", r)
	}
	if extra := leftovers(t, env.dir, "hello", "echo", "loop"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(env.dir), "escape.json")); err == nil {
		t.Errorf("a file was written outside the skills directory")
	}
}

// "422 with every problem": a package with both a file it may not hold and a broken manifest
// should hear about both.
func TestCreateSkillReportsEveryProblem(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	p := greeterPkg(t, "1.0.0", "hello")
	p["skill.json"] = []byte(`{"id":"greeter","name":"g","colour":"red"}`)
	p["run.sh"] = []byte("#!/bin/sh")
	e := wantError(t, upload(t, "POST", env.ts.URL+"/v1/skills", p, nil), 422, "invalid_skill")
	all := strings.Join(e.Error.Details, "\n")
	if !strings.Contains(all, "run.sh") || !strings.Contains(all, "colour") || !strings.Contains(all, "description") {
		t.Errorf("details %q: want run.sh, colour and description", e.Error.Details)
	}
}

// Problems name the file by its package path, not by where the server staged the upload.
func TestUploadProblemsDoNotShowServerPaths(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	p := greeterPkg(t, "1.0.0", "hello")
	p["skill.json"] = []byte(`{"id":"greeter","name":"g","colour":"red"}`)
	e := wantError(t, upload(t, "POST", env.ts.URL+"/v1/skills", p, nil), 422, "invalid_skill")
	all := strings.Join(e.Error.Details, "\n") + e.Error.Message
	if strings.Contains(all, env.dir) || strings.Contains(all, "staging") {
		t.Errorf("details show server paths: %q", e.Error.Details)
	}
}

func TestUpdateSkill(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	base := env.ts.URL + "/v1/skills"
	if r := upload(t, "POST", base, greeterPkg(t, "1.0.0", "hello"), nil); r.status != 201 {
		t.Fatal(r)
	}
	v2 := greeterPkg(t, "2.0.0", "echo")
	tests := []struct {
		name    string
		url     string             // given
		entries []bundletest.Entry // a .tar.gz
		ctype   string
		raw     []byte
		status  int // expect
		code    string
		detail  string
		version string // the version that runs afterwards
	}{
		{name: "tar.gz with a top-level directory", url: base + "/greeter", entries: tarOf(v2, "greeter"), status: 200, version: "2.0.0"},
		{name: "tar.gz without one", url: base + "/greeter", entries: tarOf(greeterPkg(t, "3.0.0", "echo"), ""), status: 200, version: "3.0.0"},
		{name: "tar.gz with ./ names", url: base + "/greeter", entries: tarOf(greeterPkg(t, "4.0.0", "echo"), "."), status: 200, version: "4.0.0"},
		{name: "x-gzip", url: base + "/greeter", entries: tarOf(greeterPkg(t, "5.0.0", "echo"), "pkg"), ctype: "application/x-gzip", status: 200, version: "5.0.0"},
		{name: "unknown id", url: base + "/nobody", entries: tarOf(v2, ""), status: 404, code: "not_found", version: "5.0.0"},
		{name: "manifest of another id", url: base + "/echo", entries: tarOf(v2, ""), status: 422, code: "invalid_skill", detail: "greeter", version: "5.0.0"},
		{name: "symlink entry", url: base + "/greeter", entries: append(tarOf(greeterPkg(t, "6.0.0", "echo"), ""), bundletest.Entry{Name: "resources/passwd.md", Type: tar.TypeSymlink, Link: "/etc/passwd"}),
			status: 422, code: "invalid_skill", version: "5.0.0"},
		{name: "hard link entry", url: base + "/greeter", entries: append(tarOf(greeterPkg(t, "6.0.0", "echo"), ""), bundletest.Entry{Name: "resources/l.md", Type: tar.TypeLink, Link: "skill.json"}),
			status: 422, code: "invalid_skill", version: "5.0.0"},
		{name: "dot-dot entry", url: base + "/greeter", entries: append(tarOf(greeterPkg(t, "6.0.0", "echo"), ""), bundletest.Entry{Name: "../../evil.md", Data: []byte("x")}),
			status: 422, code: "invalid_skill", version: "5.0.0"},
		{name: "invalid manifest", url: base + "/greeter", entries: tarOf(withFile(greeterPkg(t, "6.0.0", "echo"), "skill.json", `{"id":"greeter"}`), ""),
			status: 422, code: "invalid_skill", detail: "name", version: "5.0.0"},
		{name: "not gzip", url: base + "/greeter", ctype: "application/gzip", raw: []byte("PK\x03\x04 a zip"), status: 400, code: "bad_request", version: "5.0.0"},
		{name: "truncated", url: base + "/greeter", ctype: "application/gzip", raw: bundletest.TarGz(t, tarOf(v2, "")...)[:200], status: 400, code: "bad_request", version: "5.0.0"},
		{name: "unsupported type", url: base + "/greeter", ctype: "application/zip", raw: []byte("PK"), status: 415, code: "unsupported_media_type", version: "5.0.0"},
	}
	for _, tc := range tests { // in order: each case starts from the previous one's state
		t.Run(tc.name, func(t *testing.T) {
			var r reply
			switch {
			case tc.raw != nil:
				r = send(t, "PUT", tc.url, bytes.NewReader(tc.raw), "Content-Type", tc.ctype)
			case tc.ctype != "":
				r = send(t, "PUT", tc.url, bytes.NewReader(bundletest.TarGz(t, tc.entries...)), "Content-Type", tc.ctype)
			default:
				r = uploadTar(t, "PUT", tc.url, tc.entries)
			}
			if tc.status == 200 {
				var s runtime.Summary
				r.decode(t, &s)
				if r.status != 200 || s.Version != tc.version || s.ID != "greeter" {
					t.Errorf("update: %s", r)
				}
			} else {
				e := wantError(t, r, tc.status, tc.code)
				if !strings.Contains(strings.Join(e.Error.Details, "\n")+e.Error.Message, tc.detail) {
					t.Errorf("error does not mention %q: %s", tc.detail, r.body)
				}
			}
			res := runResult(t, post(t, env.ts.URL+"/v1/skills/greeter/runs", `{"args":{"k":1}}`))
			if !res.Success || res.Version != tc.version || string(res.Result) != `{"k":1}` && res.Version != "1.0.0" {
				t.Errorf("afterwards: %+v, want version %s", res, tc.version)
			}
			if r := get(t, env.ts.URL+"/v1/skills/greeter/resources/resources/x.md"); string(r.body) != "x "+tc.version+"\n" {
				t.Errorf("resource afterwards: %s", r)
			}
		})
	}
	if r := get(t, env.ts.URL+"/v1/skills/nobody"); r.status != 404 {
		t.Errorf("PUT of an unknown id created it: %s", r)
	}
	if extra := leftovers(t, env.dir, "hello", "echo", "loop", "greeter"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(env.dir), "evil.md")); err == nil {
		t.Errorf("written outside")
	}
	// A multipart PUT works too.
	if r := upload(t, "PUT", base+"/greeter", greeterPkg(t, "7.0.0", "hello"), nil); r.status != 200 {
		t.Errorf("multipart PUT: %s", r)
	}
}

func TestPackageTooLarge(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{MaxPackageBytes: 4096}, 100)
	noise := make([]byte, 16<<10) // incompressible, so the .tar.gz is large too
	rand.Read(noise)
	p := greeterPkg(t, "1.0.0", "hello")
	p["resources/noise.bin"] = noise
	tests := []struct {
		name string
		send func() reply
	}{
		{"multipart create", func() reply { return upload(t, "POST", env.ts.URL+"/v1/skills", p, nil) }},
		{"tar.gz create", func() reply { return uploadTar(t, "POST", env.ts.URL+"/v1/skills", tarOf(p, "greeter")) }},
		{"tar.gz update", func() reply { return uploadTar(t, "PUT", env.ts.URL+"/v1/skills/hello", tarOf(p, "")) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := wantError(t, tc.send(), http.StatusRequestEntityTooLarge, "too_large")
			if !strings.Contains(e.Error.Message, "4096") {
				t.Errorf("message %q does not say the limit", e.Error.Message)
			}
		})
	}
	// A small package still fits.
	small := pkg{"skill.json": []byte(manifestJSON("tiny", "")), "execute.wasm": wasmFixture(t, "hello")}
	if r := upload(t, "POST", env.ts.URL+"/v1/skills", small, nil); r.status != 201 {
		t.Errorf("small package: %s", r)
	}
}

func TestDeleteSkill(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{}, func() string {
		dir := t.TempDir()
		fixture(t, dir, "doomed", manifestJSON("doomed", ""), "hello", nil)
		fixture(t, dir, "kept", manifestJSON("kept", ""), "hello", nil)
		return dir
	}(), "../skills")
	u := env.ts.URL
	tests := []struct {
		name, path string // given: DELETE path
		status     int    // expect
	}{
		{"existing", "/v1/skills/doomed", 204},
		{"again", "/v1/skills/doomed", 404},
		{"unknown", "/v1/skills/never", 404},
		{"dot-dot id", "/v1/skills/..", 404},
		{"encoded traversal id", "/v1/skills/..%2F..%2Fskills", 404},
		{"invalid id", "/v1/skills/Kept", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, "DELETE", u+tc.path, nil)
			if tc.status == 204 {
				if r.status != 204 || len(r.body) != 0 {
					t.Fatalf("delete: %s", r)
				}
				return
			}
			wantError(t, r, tc.status, "not_found")
		})
	}
	wantError(t, get(t, u+"/v1/skills/doomed"), 404, "not_found")
	wantError(t, post(t, u+"/v1/skills/doomed/runs", ""), 404, "not_found")
	if r := get(t, u+"/v1/skills/kept"); r.status != 200 {
		t.Errorf("a neighbour went too: %s", r)
	}
	if extra := leftovers(t, env.dir, "kept"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
	// Creating an id that a later directory holds would shadow it: 409.
	wantError(t, upload(t, "POST", u+"/v1/skills", pkg{"skill.json": []byte(manifestJSON("word-count", "")), "execute.wasm": wasmFixture(t, "hello")}, nil), 409, "exists")
	// A skill of another (read-only) directory is not deletable; the answer says it is not here.
	r := send(t, "DELETE", u+"/v1/skills/word-count", nil)
	if r.status == 204 {
		t.Fatal("deleted a skill of the second directory")
	}
	wantError(t, r, 404, "not_found")
	if r := get(t, u+"/v1/skills/word-count"); r.status != 200 {
		t.Errorf("word-count: %s", r)
	}
}

func TestReload(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	fixture(t, env.dir, "late", manifestJSON("late", ""), "hello", nil)
	if r := get(t, env.ts.URL+"/v1/skills/late"); r.status != 404 {
		t.Fatalf("seen before a reload: %s", r)
	}
	r := post(t, env.ts.URL+"/v1/reload", "")
	var list struct {
		Skills []runtime.Summary `json:"skills"`
	}
	r.decode(t, &list)
	if r.status != 200 || len(list.Skills) != 4 {
		t.Fatalf("reload: %s", r)
	}
	if res := runResult(t, post(t, env.ts.URL+"/v1/skills/late/runs", "")); !res.Success {
		t.Errorf("run after reload: %+v", res)
	}
	os.RemoveAll(filepath.Join(env.dir, "late"))
	post(t, env.ts.URL+"/v1/reload", "")
	wantError(t, get(t, env.ts.URL+"/v1/skills/late"), 404, "not_found")
}

// Updates are atomic for runs: while 5 PUTs switch a skill between two versions (different
// modules), runs in 4 goroutines never fail, and each result is one whole version: its version
// string and its module's output agree.
func TestAtomicUpdateUnderConcurrentRuns(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	base := env.ts.URL + "/v1/skills"
	v1, v2 := greeterPkg(t, "1.0.0", "hello"), greeterPkg(t, "2.0.0", "echo")
	if r := upload(t, "POST", base, v1, nil); r.status != 201 {
		t.Fatal(r)
	}
	var stop atomic.Bool
	var runs atomic.Int64
	seen := sync.Map{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i := 0; !stop.Load() || i < 3; i++ {
				body := fmt.Sprintf(`{"args":{"g":%d,"i":%d}}`, g, i)
				r := post(t, base+"/greeter/runs", body)
				if r.status != 200 {
					t.Errorf("run: %s", r)
					return
				}
				var res run.Result
				r.decode(t, &res)
				runs.Add(1)
				seen.Store(res.Version, true)
				switch {
				case !res.Success:
					t.Errorf("a run failed during updates: %s", r.body)
				case res.Version == "1.0.0" && string(res.Result) != `{"greeting":"hi"}`,
					res.Version == "2.0.0" && string(res.Result) != fmt.Sprintf(`{"g":%d,"i":%d}`, g, i):
					t.Errorf("version %s ran another version's module: %s", res.Version, res.Result)
				case res.Version != "1.0.0" && res.Version != "2.0.0":
					t.Errorf("version %q", res.Version)
				}
			}
		})
	}
	for i := 0; i < 5; i++ {
		// Let some runs happen on each version, so updates and runs interleave.
		from := runs.Load()
		if !waitFor(hangGuard, func() bool { return runs.Load() >= from+8 }) {
			t.Errorf("the runs stopped after %d", runs.Load())
			break
		}
		p := v2
		if i%2 == 1 {
			p = v1
		}
		r := uploadTar(t, "PUT", base+"/greeter", tarOf(p, "greeter"))
		if r.status != 200 {
			t.Errorf("update %d: %s", i, r)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d runs across 5 updates", runs.Load())
	if _, ok := seen.Load("2.0.0"); !ok {
		t.Errorf("no run saw version 2")
	}
	if res := runResult(t, post(t, base+"/greeter/runs", `{"args":{"last":true}}`)); res.Version != "2.0.0" {
		t.Errorf("final version %s, want 2.0.0 (the fifth PUT)", res.Version)
	}
	if extra := leftovers(t, env.dir, "hello", "echo", "loop", "greeter"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
}

// Runs in flight finish on the version they started with, whatever a PUT or DELETE does
// meanwhile.
func TestRunInFlightSurvivesUpdateAndDelete(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	base := env.ts.URL + "/v1/skills"
	// slow loops until the test cancels it, after the PUT or DELETE: it is in flight throughout
	// (its timeout is far off).
	slow := pkg{"skill.json": []byte(manifestJSON("slow", `"version":"1.0.0","limits":{"timeoutMs":60000}`)), "execute.wasm": wasmFixture(t, "loop")}
	if r := upload(t, "POST", base, slow, nil); r.status != 201 {
		t.Fatal(r)
	}
	for _, then := range []string{"PUT", "DELETE"} {
		t.Run(then, func(t *testing.T) {
			resp := stream(t, context.Background(), base+"/slow/runs", `{}`)
			defer resp.Body.Close()
			var result *run.Result
			readSSE(t, resp.Body, func(e sseEvent) bool {
				if e.ev.Status == "running" {
					var r reply
					if then == "PUT" {
						r = uploadTar(t, "PUT", base+"/slow", tarOf(pkg{"skill.json": []byte(manifestJSON("slow", `"version":"2.0.0"`)), "execute.wasm": wasmFixture(t, "hello")}, ""))
					} else {
						r = send(t, "DELETE", base+"/slow", nil)
					}
					if r.status >= 300 {
						t.Errorf("%s during the run: %s", then, r)
					}
					// The run is still in flight, on its version: end it.
					if r := post(t, env.ts.URL+"/v1/runs/"+e.ev.RunID+"/cancel", ``); r.status != 202 {
						t.Errorf("cancel the run after the %s: %s", then, r)
					}
				}
				if e.ev.Result != nil {
					result = e.ev.Result
				}
				return true
			})
			if result == nil {
				t.Fatal("no result")
			}
			if then == "PUT" {
				if result.Version != "1.0.0" || result.Error == nil || result.Error.Kind != run.KindCanceled {
					t.Errorf("the run in flight: %+v; want version 1.0.0 ending canceled", result)
				}
				// The next run is the new version, which is hello: quick and successful.
				if res := runResult(t, post(t, base+"/slow/runs", "")); res.Version != "2.0.0" || !res.Success {
					t.Errorf("after the PUT: %+v", res)
				}
				// Back to the slow version for the DELETE case.
				if r := upload(t, "PUT", base+"/slow", slow, nil); r.status != 200 {
					t.Fatal(r)
				}
				return
			}
			if result.Version != "1.0.0" || result.Error == nil || result.Error.Kind != run.KindCanceled {
				t.Errorf("the run in flight during DELETE: %+v; want version 1.0.0 ending canceled", result)
			}
			wantError(t, post(t, base+"/slow/runs", ""), 404, "not_found")
		})
	}
}

// zeroTarGz is a .tar.gz of files of size zeros each (whole MiB), made cheaply: one gzip member
// of 1 MiB of zeros, compressed once and repeated, between members holding the tar headers.
// gzip readers read concatenated members as one stream, so it inflates about 1000 to 1.
func zeroTarGz(t testing.TB, size int64, names ...string) []byte {
	t.Helper()
	member := func(data []byte) []byte {
		var b bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		gz.Write(data)
		gz.Close()
		return b.Bytes()
	}
	if size%(1<<20) != 0 {
		t.Fatalf("zeroTarGz: %d is not whole MiB", size)
	}
	mib := member(make([]byte, 1<<20))
	var out bytes.Buffer
	for _, name := range names {
		var h bytes.Buffer
		if err := tar.NewWriter(&h).WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		out.Write(member(h.Bytes()))
		for range size >> 20 {
			out.Write(mib)
		}
	}
	out.Write(member(make([]byte, 1024))) // the end of the archive
	return out.Bytes()
}

// Decompression bombs and packages of too many entries are refused with 413 naming the limit,
// while they stream in, and the server carries on.
func TestUploadBombsAreRefused(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{}, t.TempDir())
	url := env.ts.URL + "/v1/skills"
	resources := func(n int) []string {
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("bomb/resources/z%02d.bin", i))
		}
		return names
	}
	gz := func(data []byte) func(*testing.T) reply {
		return func(t *testing.T) reply {
			return send(t, "POST", url, bytes.NewReader(data), "Content-Type", "application/gzip")
		}
	}
	parts := func(n int, file bool) func(*testing.T) reply {
		return func(t *testing.T) reply {
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			w.WriteField("id", "bomb")
			for i := range n {
				if file {
					fw, _ := w.CreateFormFile(fmt.Sprintf("resources/%d.md", i), "x.md")
					fw.Write([]byte("x"))
				} else {
					w.WriteField("x", "y")
				}
			}
			w.Close()
			return send(t, "POST", url, &buf, "Content-Type", w.FormDataContentType())
		}
	}
	big := greeterPkg(t, "1.0.0", "hello")
	big["resources/big.bin"] = make([]byte, 16<<20+1)
	tests := []struct {
		name    string
		send    func(*testing.T) reply // t: the subtest's
		mention []string               // in the message
	}{
		{"tar.gz: a module of zeros under the module cap", gz(zeroTarGz(t, 60<<20, "bomb/execute.wasm")), []string{"maxRatio", "bomb/execute.wasm"}},
		{"tar.gz: a gigabyte in 64 resources", gz(zeroTarGz(t, 16<<20, resources(64)...)), []string{"maxRatio", "bomb/resources/z00.bin"}},
		{"tar.gz: one file of a gigabyte", gz(zeroTarGz(t, 1<<30, "bomb/execute.wasm")), []string{"maxFileBytes", "bomb/execute.wasm", "67108864"}},
		{"multipart: a resource over its cap", func(t *testing.T) reply { return upload(t, "POST", url, big, nil) }, []string{"maxFileBytes", "resources/big.bin", "16777216"}},
		{"multipart: 10000 file parts", parts(10000, true), []string{"maxFiles", "256"}},
		{"multipart: 10000 plain fields", parts(10000, false), []string{"maxFiles", "256"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := wantError(t, tc.send(t), http.StatusRequestEntityTooLarge, "too_large")
			t.Log(e.Error.Message)
			for _, m := range tc.mention {
				if !strings.Contains(e.Error.Message, m) {
					t.Errorf("message %q does not mention %q", e.Error.Message, m)
				}
			}
			if r := get(t, env.ts.URL+"/healthz"); r.status != http.StatusOK {
				t.Errorf("healthz after the bomb: %s", r)
			}
		})
	}
	if extra := leftovers(t, env.dir); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
	// A real package, the bundled hello, still goes in, and runs.
	var hello []bundletest.Entry
	for _, name := range []string{"skill.json", "execute.wasm", "SKILL.md"} {
		data, err := os.ReadFile(filepath.Join("..", "skills", "hello", name))
		if err != nil {
			t.Fatal(err)
		}
		hello = append(hello, bundletest.Entry{Name: "hello/" + name, Data: data})
	}
	if r := uploadTar(t, "POST", url, hello); r.status != http.StatusCreated {
		t.Fatalf("the bundled hello: %s", r)
	}
	if res := runResult(t, post(t, url+"/hello/runs", `{"args":{"name":"Ada"}}`)); !res.Success {
		t.Errorf("run: %+v", res)
	}
}

// withFile is p with the file name set to data (a .tar.gz may not carry a name twice).
func withFile(p pkg, name, data string) pkg {
	p[name] = []byte(data)
	return p
}
