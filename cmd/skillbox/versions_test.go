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
