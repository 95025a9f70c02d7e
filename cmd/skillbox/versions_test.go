package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// skillbox serve keeps versions in its store: GET /v1/skills/{id}/versions lists the folder's
// version, POST .../publish moves it, and the store in --data-dir holds what the server did.
func TestServeKeepsVersions(t *testing.T) {
	t.Parallel()
	skills, data := t.TempDir(), t.TempDir()
	skillFixture(t, skills, "quick", manifest("quick", `"version":"1.2.3"`), "hello")
	p := startServe(t, binary(t), true, "serve", "--addr", "127.0.0.1:0", "--skills", skills, "--data-dir", data)
	code, body, _ := httpDo(t, http.MethodGet, p.base+"/v1/skills/quick/versions", "")
	if code != http.StatusOK {
		t.Fatalf("GET versions: %d %s\n%s", code, body, p.stderr())
	}
	var list struct {
		Versions []version.Version `json:"versions"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Versions) != 1 {
		t.Fatalf("GET versions: %v: %s", err, body)
	}
	v := list.Versions[0]
	if v.Status != version.Draft || v.Source != "folder" || v.Version != "1.2.3" {
		t.Fatalf("the folder's version: %+v", v)
	}
	code, body, _ = httpDo(t, http.MethodPost, p.base+"/v1/skills/quick/versions/"+v.Digest+"/publish", `{"note":"first"}`, jsonType...)
	if code != http.StatusOK {
		t.Fatalf("publish: %d %s", code, body)
	}
	stored, err := openDB(t, filepath.Join(data, sqlite.FileName)).Version(t.Context(), "quick", v.Digest)
	if err != nil || stored.Status != version.Active || stored.Note != "first" {
		t.Fatalf("the store in --data-dir: %+v, %v", stored, err)
	}
}

// packFixture writes the skill id (the hello module, with manifest extra) under a new directory
// and packs it into a bundle, whose path it returns.
func packFixture(t *testing.T, id, extra string) string {
	t.Helper()
	src := t.TempDir()
	bundle := filepath.Join(t.TempDir(), id+".skill.tgz")
	expect{code: exitOK}.verify(t, cli(t, "", "pack", skillFixture(t, src, id, manifest(id, extra), "hello"), "-o", bundle))
	return bundle
}

// install records a bundle as a version by the OS user; a second bundle of the same skill that
// asks for more is installed pending, printed with its diff, and exits 3; the skill does not
// run until it is approved. (What the first version asks less of is memory, not time: its runs
// must succeed however slow the machine.)
func TestInstallRecordsVersions(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	first := packFixture(t, "tool", `"version":"1.0.0","limits":{"memoryMiB":32}`)
	r := cli(t, "", "install", first, "--skills", skills, "--json")
	expect{code: exitOK}.verify(t, r)
	var v version.Version
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatal(err)
	}
	if v.Status != version.Draft || v.Source != "bundle" || v.CreatedBy != osUser() || v.Version != "1.0.0" {
		t.Fatalf("the first install's version: %+v", v)
	}
	expect{code: exitOK, stdout: []string{"installed tool " + v.Digest, "version 1.0.0: draft", "skillbox publish tool " + shortDigest(v.Digest)}}.
		verify(t, cli(t, "", "install", first, "--skills", skills))
	// Never published, a wider bundle is one more draft: the skill is still being written.
	expect{code: exitOK, stdout: []string{"version 2.1.0: draft"}}.
		verify(t, cli(t, "", "install", packFixture(t, "tool", `"version":"2.1.0"`), "--skills", skills))
	expect{code: exitOK}.verify(t, cli(t, "", "install", first, "--skills", skills))
	expect{code: exitOK, stdout: []string{"it is now active"}}.verify(t, cli(t, "", "publish", "tool", shortDigest(v.Digest), "--skills", skills))

	// Published, a bundle that asks for more than the active version is pending, and the active
	// version keeps serving.
	wider := packFixture(t, "tool", `"version":"2.0.0"`)
	r = cli(t, "", "install", wider, "--skills", skills)
	expect{code: exitPending, stdout: []string{"version 2.0.0: pending", "  - limits.memoryMiB: 32 -> 64", "skillbox approve tool "}}.verify(t, r)
	expect{code: exitOK, stdout: []string{`"greeting": "hi"`}}.verify(t, cli(t, "", "run", "tool", "--skills", skills))

	// Without a store, nothing is recorded, and an installed skill is not replaced.
	expect{code: exitOK, stdout: []string{"installed tool sha256:"}, notStdout: []string{"draft"}}.
		verify(t, cli(t, "", "install", first, "--skills", t.TempDir(), "--no-store"))
	expect{code: exitFailed, stderr: []string{"exists"}}.verify(t, cli(t, "", "install", first, "--skills", skills, "--no-store"))
}

// The version commands walk a pending version through the state machine as the local operator:
// versions lists it with what it asks for; approve, publish and yank move it, by a digest
// prefix, recording the OS user and the note; wrong digests and wrong moves say how to fix them.
func TestVersionCommands(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	in := func(args ...string) []string { return append(args, "--skills", skills) }
	r := cli(t, "", in("install", packFixture(t, "tool", `"version":"1.0.0","limits":{"memoryMiB":32}`), "--json")...)
	expect{code: exitOK}.verify(t, r)
	var first version.Version
	if err := json.Unmarshal([]byte(r.stdout), &first); err != nil {
		t.Fatal(err)
	}
	expect{code: exitOK}.verify(t, cli(t, "", in("publish", "tool", first.Digest)...))
	expect{code: exitPending}.verify(t, cli(t, "", in("install", packFixture(t, "tool", `"version":"2.0.0"`))...))
	list := func() []version.Version {
		t.Helper()
		r := cli(t, "", in("versions", "tool", "--json")...)
		expect{code: exitOK}.verify(t, r)
		var out struct {
			Skill    string            `json:"skill"`
			Versions []version.Version `json:"versions"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Skill != "tool" || len(out.Versions) != 2 {
			t.Fatalf("versions --json: %v\n%s", err, r)
		}
		return out.Versions
	}
	vs := list()
	v2, v1 := vs[0], vs[1]
	if v2.Version != "2.0.0" || v2.Status != version.Pending || v1.Status != version.Active {
		t.Fatalf("versions, newest first: %+v", vs)
	}
	expect{code: exitOK, stdout: []string{
		"VERSION  DIGEST", "2.0.0    " + shortDigest(v2.Digest) + "  pending  bundle  " + osUser(),
		"asks for: limits.memoryMiB: 32 -> 64", "1.0.0    " + shortDigest(v1.Digest) + "  active",
	}}.verify(t, cli(t, "", in("versions", "tool")...))

	short := shortDigest(v2.Digest)[:8]
	expect{code: exitFailed, stderr: []string{"not a version digest", "skillbox versions tool"}}.verify(t, cli(t, "", in("approve", "tool", short[:7])...))
	expect{code: exitFailed, stderr: []string{"no such version", "skillbox versions tool"}}.verify(t, cli(t, "", in("approve", "tool", "00000000")...))
	expect{code: exitFailed, stderr: []string{"no skill \"nope\""}}.verify(t, cli(t, "", in("versions", "nope")...))
	expect{code: exitFailed, stderr: []string{"it is pending, and deprecate starts from [active]", "skillbox versions tool"}}.
		verify(t, cli(t, "", in("deprecate", "tool", short)...))
	expect{code: exitUsage, stderr: []string{"approve takes a skill id and a version's digest"}}.verify(t, cli(t, "", in("approve", "tool")...))

	expect{code: exitOK, stdout: []string{"approved tool " + shortDigest(v2.Digest) + ": it is now draft", "skillbox publish tool"}}.
		verify(t, cli(t, "", in("approve", "tool", short, "--note", "reviewed")...))
	expect{code: exitFailed, stderr: []string{"it is draft, and approve starts from [pending]", "skillbox versions tool"}}.
		verify(t, cli(t, "", in("approve", "tool", short)...))
	expect{code: exitOK, stdout: []string{`"greeting": "hi"`}}.verify(t, cli(t, "", in("run", "tool")...))
	expect{code: exitOK, stdout: []string{"published tool", "it is now active"}}.verify(t, cli(t, "", in("publish", "tool", v2.Digest, "--note", "ship it")...))
	expect{code: exitOK, stdout: []string{"yanked tool", "it is now yanked"}}.verify(t, cli(t, "", in("yank", "tool", short)...))

	vs = list()
	if vs[0].Status != version.Yanked || vs[0].UpdatedBy != osUser() || vs[0].Note != "" {
		t.Fatalf("after yank: %+v", vs[0])
	}
	// The audit trail keeps every move's note, not only the last (the yank's is empty).
	var trail []string
	for _, e := range vs[0].Events {
		trail = append(trail, e.Action+":"+e.Note)
	}
	if want := []string{"record:", "approve:reviewed", "publish:ship it", "yank:"}; !slices.Equal(trail, want) {
		t.Fatalf("the trail of v2: %v, want %v", trail, want)
	}
	expect{code: exitFailed, stderr: []string{"yanked", "never runs"}}.verify(t, cli(t, "", in("run", "tool")...))
}
