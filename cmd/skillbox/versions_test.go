package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store/sqlite"
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
		Versions []runtime.Version `json:"versions"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Versions) != 1 {
		t.Fatalf("GET versions: %v: %s", err, body)
	}
	v := list.Versions[0]
	if v.Status != runtime.VersionDraft || v.Source != "folder" || v.Version != "1.2.3" {
		t.Fatalf("the folder's version: %+v", v)
	}
	code, body, _ = httpDo(t, http.MethodPost, p.base+"/v1/skills/quick/versions/"+v.Digest+"/publish", `{"note":"first"}`, jsonType...)
	if code != http.StatusOK {
		t.Fatalf("publish: %d %s", code, body)
	}
	stored, err := openDB(t, filepath.Join(data, sqlite.FileName)).Version(t.Context(), "quick", v.Digest)
	if err != nil || stored.Status != runtime.VersionActive || stored.Note != "first" {
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
// run until it is approved.
func TestInstallRecordsVersions(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	first := packFixture(t, "tool", `"version":"1.0.0","limits":{"timeoutMs":5000}`)
	r := cli(t, "", "install", first, "--skills", skills, "--json")
	expect{code: exitOK}.verify(t, r)
	var v runtime.Version
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatal(err)
	}
	if v.Status != runtime.VersionDraft || v.Source != "bundle" || v.CreatedBy != osUser() || v.Version != "1.0.0" {
		t.Fatalf("the first install's version: %+v", v)
	}
	expect{code: exitOK, stdout: []string{"installed tool " + v.Digest, "version 1.0.0: draft", "skillbox publish tool " + shortDigest(v.Digest)}}.
		verify(t, cli(t, "", "install", first, "--skills", skills))

	wider := packFixture(t, "tool", `"version":"2.0.0"`)
	r = cli(t, "", "install", wider, "--skills", skills)
	expect{code: exitPending, stdout: []string{"version 2.0.0: pending", "+ limits.timeoutMs: 5000 -> 30000", "skillbox approve tool "}}.verify(t, r)
	expect{code: exitFailed, stderr: []string{"pending_approval", "skillbox approve tool"}}.
		verify(t, cli(t, "", "run", "tool", "--skills", skills))

	// Without a store, nothing is recorded, and an installed skill is not replaced.
	expect{code: exitOK, stdout: []string{"installed tool sha256:"}, notStdout: []string{"draft"}}.
		verify(t, cli(t, "", "install", first, "--skills", t.TempDir(), "--no-store"))
	expect{code: exitFailed, stderr: []string{"exists"}}.verify(t, cli(t, "", "install", first, "--skills", skills, "--no-store"))
}
