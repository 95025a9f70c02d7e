package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// Versions over HTTP, with keys and a real SQLite store: an update that asks for more answers
// 202 with its diff and does not run; the roles of the state machine hold per key; a server
// without keys does not offer approval.
func TestVersionsHTTP(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	keys := []APIKey{{Name: "ann", Key: "author-key-0123456789", Role: access.RoleAuthor}, {Name: "pub", Key: "publisher-key-0123456789", Role: access.RolePublisher},
		{Name: "ops", Key: "admin-key-0123456789", Role: access.RoleAdmin}}
	env := newEnvRuntime(t, Options{Keys: keys}, runtime.Config{Versions: st}, t.TempDir())
	as := func(k APIKey) []string { return []string{"Authorization", "Bearer " + k.Key} }
	author, publisher, admin := as(keys[0]), as(keys[1]), as(keys[2])

	files := map[string][]byte{}
	for _, name := range []string{"skill.json", "execute.wasm"} {
		data, err := os.ReadFile(filepath.Join("..", "skills", "word-count", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	upload := func(method, url string, status int) version.Version {
		t.Helper()
		body, ctype := multipartBody(t, files, nil)
		r := send(t, method, env.ts.URL+url, body, append([]string{"Content-Type", ctype}, author...)...)
		if r.status != status {
			t.Fatalf("%s %s: %s, want %d", method, url, r, status)
		}
		var out struct {
			ID      string          `json:"id"`
			Version version.Version `json:"recorded_version"`
		}
		r.decode(t, &out)
		if out.ID != "word-count" || out.Version.Digest == "" {
			t.Fatalf("upload answer: %s", r)
		}
		return out.Version
	}
	v1 := upload(http.MethodPost, "/v1/skills", http.StatusCreated)
	if v1.Status != version.Draft || v1.CreatedBy != "ann" || v1.Source != "upload" {
		t.Fatalf("first upload: %+v", v1)
	}
	act := func(v version.Version, action string, who []string) reply {
		return post(t, env.ts.URL+"/v1/skills/word-count/versions/"+v.Digest+"/"+action, `{"note":"ok"}`, who...)
	}
	wantError(t, act(v1, "publish", author), http.StatusForbidden, "forbidden")
	if r := act(v1, "publish", publisher); r.status != http.StatusOK {
		t.Fatalf("publish: %s", r)
	}

	var m map[string]any
	if err := json.Unmarshal(files["skill.json"], &m); err != nil {
		t.Fatal(err)
	}
	m["permissions"] = map[string]any{"network": []string{"api.example.com"}}
	files["skill.json"], _ = json.Marshal(m)
	// The policy must grant the host for it to be a widening: a refused request widens nothing.
	p := &policy.Policy{Network: []string{"api.example.com"}}
	if err := env.rt.SetPolicy(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	v2 := upload(http.MethodPut, "/v1/skills/word-count", http.StatusAccepted)
	if v2.Status != version.Pending || strings.Join(v2.Diff, ";") != "network: + api.example.com" {
		t.Fatalf("the wider update: %+v", v2)
	}
	// The published version keeps serving.
	res := runResult(t, post(t, env.ts.URL+"/v1/skills/word-count/runs", `{"args":{"text":"a b"}}`, author...))
	if res.Digest != v1.Digest {
		t.Fatalf("ran %s, want the published %s", res.Digest, v1.Digest)
	}
	r := get(t, env.ts.URL+"/v1/skills/word-count/versions", author...)
	var list versionList
	r.decode(t, &list)
	if len(list.Versions) != 2 || list.Versions[0].Status != version.Pending || list.Versions[1].Status != version.Active {
		t.Fatalf("versions: %s", r)
	}
	wantError(t, act(v2, "approve", publisher), http.StatusForbidden, "forbidden")
	wantError(t, act(v2, "promote", admin), http.StatusNotFound, "not_found")
	if r := act(v2, "approve", admin); r.status != http.StatusOK || !strings.Contains(string(r.body), `"status":"draft"`) {
		t.Fatalf("approve: %s", r)
	}
	wantError(t, act(v2, "approve", admin), http.StatusConflict, "version_conflict")
	// Each version's audit trail: who did what, when, and the note, every move kept.
	get(t, env.ts.URL+"/v1/skills/word-count/versions", author...).decode(t, &list)
	var trail []string
	for _, e := range list.Versions[0].Events {
		trail = append(trail, e.Action+":"+string(e.Status)+":"+e.By+":"+e.Note)
	}
	if want := []string{"record:pending:ann:", "approve:draft:ops:ok"}; !slices.Equal(trail, want) || list.Versions[0].Events[1].At.IsZero() {
		t.Fatalf("v2's trail %v, want %v", trail, want)
	}

	// Keyless: everyone is admin, so nobody's approval means anything; publish still works.
	keyless := newEnvRuntime(t, Options{}, runtime.Config{Versions: st}, env.dir)
	wantError(t, post(t, keyless.ts.URL+"/v1/skills/word-count/versions/"+v2.Digest+"/reject", ``), http.StatusForbidden, "forbidden")
}

// On a server with keys, an upload no publisher has published runs for its author and the
// admins, to test it, and for no one else; once published, for everyone. A skill the operator
// placed in the skills directory is the operator's: its draft runs for every runner.
func TestDraftsRunForTheirAuthor(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	keys := []APIKey{{Name: "ann", Key: "author-key-0123456789", Role: access.RoleAuthor}, {Name: "bob", Key: "runner-key-0123456789", Role: access.RoleRunner},
		{Name: "pub", Key: "publisher-key-0123456789", Role: access.RolePublisher}, {Name: "ops", Key: "admin-key-0123456789", Role: access.RoleAdmin}}
	dir := t.TempDir()
	fixture(t, dir, "placed", manifestJSON("placed", ""), "hello", nil)
	env := newEnvRuntime(t, Options{Keys: keys}, runtime.Config{Versions: st}, dir)
	as := func(k APIKey) []string { return []string{"Authorization", "Bearer " + k.Key} }
	ann, bob, pub, ops := as(keys[0]), as(keys[1]), as(keys[2]), as(keys[3])
	body, ctype := multipartBody(t, map[string][]byte{"skill.json": []byte(manifestJSON("uploaded", "")), "execute.wasm": wasmFixture(t, "hello")}, nil)
	r := send(t, http.MethodPost, env.ts.URL+"/v1/skills", body, append([]string{"Content-Type", ctype}, ann...)...)
	if r.status != http.StatusCreated {
		t.Fatalf("upload: %s", r)
	}
	var up struct {
		Version version.Version `json:"recorded_version"`
	}
	r.decode(t, &up)
	runAs := func(id string, who []string) reply {
		return post(t, env.ts.URL+"/v1/skills/"+id+"/runs", `{}`, who...)
	}
	runResult(t, runAs("uploaded", ann))
	runResult(t, runAs("uploaded", ops))
	if e := wantError(t, runAs("uploaded", bob), http.StatusNotFound, "not_found"); !strings.Contains(e.Error.Message, "runs only for its author") {
		t.Errorf("a runner's run of a draft: %s", e.Error.Message)
	}
	runResult(t, runAs("placed", bob))
	if r := post(t, env.ts.URL+"/v1/skills/uploaded/versions/"+up.Version.Digest+"/publish", `{}`, pub...); r.status != http.StatusOK {
		t.Fatalf("publish: %s", r)
	}
	runResult(t, runAs("uploaded", bob))
}
