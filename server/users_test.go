package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
)

const (
	aliceKey = "acme-alice-key-0123456789"
	bobKey   = "acme-bob-key-0123456789ab"
	carolKey = "acme-carol-key-0123456789" // the tenant's admin
)

// newUsersEnv is a server with one tenant, acme, on a SQLite store, and three keys of it:
// alice and bob (authors) and carol (admin). The tenant has one skill of its own, team-tools.
func newUsersEnv(t testing.TB) (*httptest.Server, store.Store) {
	t.Helper()
	ctx := context.Background()
	st, rec := testStore(t)
	dir := t.TempDir()
	fixture(t, dir, "team-tools", manifestJSON("team-tools", `"version":"1.0.0","parameters":{"type":"object"}`), "echo", nil)
	root, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{t.TempDir()}, NoBackgroundCheck: true, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close(ctx) })
	acme, err := runtime.New(ctx, runtime.Config{Tenant: "acme", SkillDirs: []string{dir}, Policy: &policy.Policy{Runs: policy.Runs{RecordArguments: true}}, Recorder: rec, Versions: st.Tenant("acme"), Artifacts: rec.Artifacts("acme"), NoBackgroundCheck: true, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acme.Close(ctx) })
	srv, err := New(root, Options{History: st,
		Keys: []APIKey{
			{Name: "alice", Key: aliceKey, Role: access.RoleAuthor, Tenant: "acme", User: "alice@acme"},
			{Name: "bob", Key: bobKey, Role: access.RoleAuthor, Tenant: "acme", User: "bob@acme"},
			{Name: "carol", Key: carolKey, Role: access.RoleAdmin, Tenant: "acme", User: "carol@acme"}},
		Tenants: map[string]Tenant{"acme": {Runtime: acme, History: st.Tenant("acme")}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, st
}

// diaryPkg is a skill that leaves a file in /output: alice's own, in the tests.
func diaryPkg(t testing.TB, id, version string) pkg {
	return pkg{
		"skill.json": []byte(manifestJSON(id, `"version":"`+version+`","description":"the `+id+`-private-marker skill","parameters":{"type":"object"},`+
			`"permissions":{"files":[{"path":"/output","access":"read-write"}]}`)),
		"execute.wasm": wasmFixture(t, "output"),
	}
}

// A user's own skill (visibility user) is that user's alone within the tenant: another user's
// key never reads it, its runs, their arguments or their files through any endpoint, nor
// learns it exists by taking its id; the tenant's admin sees its runs, and acts on it in the
// user's view (Skillbox-User).
func TestUserIsolation(t *testing.T) {
	ts, st := newUsersEnv(t)
	ctx := t.Context()

	r := upload(t, "POST", ts.URL+"/v1/skills?visibility=user", diaryPkg(t, "alice-diary", "1"), nil, "X-API-Key", aliceKey)
	if r.status != http.StatusCreated || r.object(t)["visibility"] != "user" {
		t.Fatalf("alice's upload: %s", r)
	}
	// Her run, sync, leaving a file, and one async.
	code, body := do(t, "POST", ts.URL+"/v1/skills/alice-diary/runs", `{"args":{"a":"alice-file-marker.txt*7","secret":"alice-arg-marker"}}`, "X-API-Key", aliceKey)
	if code != 200 {
		t.Fatalf("alice's run: %d %s", code, body)
	}
	var res struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal([]byte(body), &res)
	aliceRun := res.RunID
	artifact := "/v1/runs/" + aliceRun + "/artifacts/alice-file-marker.txt"
	if code, body := do(t, "GET", ts.URL+artifact, "", "X-API-Key", aliceKey); code != 200 || body != "xxxxxxx" {
		t.Fatalf("alice's own artifact: %d %q", code, body)
	}
	code, body = do(t, "POST", ts.URL+"/v1/skills/alice-diary/runs?async=true", `{"args":{"secret":"alice-arg-marker"}}`, "X-API-Key", aliceKey)
	if code != http.StatusAccepted {
		t.Fatalf("alice's async run: %d %s", code, body)
	}
	_ = json.Unmarshal([]byte(body), &res)
	aliceAsync := res.RunID
	// A run of the tenant's skill by alice is the tenant's: bob sees it.
	code, body = do(t, "POST", ts.URL+"/v1/skills/team-tools/runs", `{"args":{}}`, "X-API-Key", aliceKey)
	_ = json.Unmarshal([]byte(body), &res)
	teamRun := res.RunID
	if code != 200 {
		t.Fatalf("alice's run of the tenant's skill: %d %s", code, body)
	}
	// Wait until the async run's record has its end, so every reader below sees it whole.
	if !waitFor(hangGuard, func() bool {
		run, err := st.Tenant("acme").FindRun(ctx, aliceAsync)
		return err == nil && run.Status.Final()
	}) {
		t.Fatal("alice's async run did not finish")
	}
	vs, err := st.Tenant("acme").Versions(ctx, "alice-diary@"+access.UserScope("alice@acme"))
	if err != nil || len(vs) != 1 {
		t.Fatalf("alice's version in the store: %v %v", vs, err)
	}
	digest := vs[0].Digest
	secrets := []string{"alice-diary", "alice-arg-marker", aliceRun, aliceAsync, "xxxxxxx"}

	fill := strings.NewReplacer(":id", "alice-diary", ":run_id", aliceRun, ":digest", digest,
		":archive", "alice-diary.zip", ":script", "run.py", ":path", "SKILL.md")
	var paths []string
	for _, r := range echoRoutes(t, &tenantEnv{ts: ts}) {
		if r.Method == http.MethodGet {
			paths = append(paths, fill.Replace(r.Path))
		}
	}
	paths = append(paths, "/v1/runs?skill=alice-diary", "/v1/tools?tools=all", "/v1/versions?status=draft", artifact,
		"/v1/runs/"+aliceAsync, "/v1/runs/"+aliceAsync+"/events", "/metrics")
	// What bob may not see, on every route: a 4xx may repeat the id asked for, nothing more.
	leaks := func(who, what string, code int, body string) {
		t.Helper()
		for _, s := range secrets {
			asked := s == "alice-diary" || s == aliceRun || s == aliceAsync
			if strings.Contains(body, s) && (!asked || code < 400) {
				t.Errorf("%s as %s shows alice's %q: %d %s", what, who, s, code, body)
			}
		}
	}
	for _, p := range paths {
		code, body := do(t, "GET", ts.URL+p, "", "X-API-Key", bobKey)
		if code >= 500 {
			t.Errorf("GET %s as bob: %d %s", p, code, body)
		}
		leaks("bob", "GET "+p, code, body)
	}
	// Bob sees the tenant's run alice made: the check above is not vacuous.
	if code, body := do(t, "GET", ts.URL+"/v1/runs", "", "X-API-Key", bobKey); code != 200 || !strings.Contains(body, teamRun) {
		t.Errorf("bob's runs: %d %s", code, body)
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/skills/alice-diary/runs", `{"args":{}}`},
		{"POST", "/v1/runs", `{"skill":"alice-diary","args":{}}`},
		{"POST", "/v1/tools/call", `{"name":"skill_alice_diary","arguments":{}}`},
		{"POST", "/v1/skills/alice-diary/versions/" + digest + "/deprecate", `{}`},
		{"DELETE", "/v1/skills/alice-diary", ``},
		{"POST", "/v1/runs/" + aliceAsync + "/cancel", `{}`},
	} {
		code, body := do(t, c.method, ts.URL+c.path, c.body, "X-API-Key", bobKey)
		refused := code >= 400 && code < 500
		if c.path == "/v1/tools/call" {
			refused = code == 200 && strings.Contains(body, `"is_error":true`) && strings.Contains(body, `"not_found"`)
		}
		if !refused {
			t.Errorf("%s %s as bob: %d %s", c.method, c.path, code, body)
		}
		leaks("bob", c.method+" "+c.path, code, body)
	}
	// Only an admin acts as another user.
	if code, body := do(t, "GET", ts.URL+"/v1/skills", "", "X-API-Key", bobKey, HeaderUser, "alice@acme"); code != http.StatusForbidden {
		t.Errorf("bob as alice: %d %s", code, body)
	}

	// MCP, with the official client: bob's session lists his tools, not alice's.
	cctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	tools, err := mcpSession(t, cctx, ts.URL, bobKey).ListTools(cctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Description, "alice-diary-private-marker") {
			t.Errorf("bob's MCP tools include alice's: %s", tool.Name)
		}
	}

	// Nor does taking the id tell bob anything: his own skill of that id is his.
	if r := upload(t, "POST", ts.URL+"/v1/skills?visibility=user", diaryPkg(t, "alice-diary", "9"), nil, "X-API-Key", bobKey); r.status != http.StatusCreated {
		t.Fatalf("bob's skill of the same id: %s", r)
	}
	code, body = do(t, "GET", ts.URL+"/v1/skills/alice-diary/versions", "", "X-API-Key", bobKey)
	if code != 200 || strings.Contains(body, digest) || !strings.Contains(body, `"9"`) {
		t.Errorf("bob's versions of his own alice-diary: %d %s", code, body)
	}
	// Alice sees hers, carol (admin) sees her runs, and acts in her view with the header.
	for who, c := range map[string]struct {
		key, path, want string
		header          []string
	}{
		"alice's skills":           {aliceKey, "/v1/skills", "alice-diary-private-marker", nil},
		"alice's runs":             {aliceKey, "/v1/runs", aliceRun, nil},
		"alice's events":           {aliceKey, "/v1/runs/" + aliceAsync + "/events", "result", nil},
		"carol's runs":             {carolKey, "/v1/runs?skill=alice-diary", aliceRun, nil},
		"carol's read of the run":  {carolKey, "/v1/runs/" + aliceRun, "alice-arg-marker", nil},
		"carol's read of the file": {carolKey, artifact, "xxxxxxx", nil},
		"carol as alice":           {carolKey, "/v1/skills/alice-diary/versions", digest, []string{HeaderUser, "alice@acme"}},
	} {
		h := append([]string{"X-API-Key", c.key}, c.header...)
		if code, body := do(t, "GET", ts.URL+c.path, "", h...); code != 200 || !strings.Contains(body, c.want) {
			t.Errorf("%s: GET %s: %d, want %q in %s", who, c.path, code, c.want, body)
		}
	}
	if code, body := do(t, "GET", ts.URL+"/v1/skills", "", "X-API-Key", carolKey); strings.Contains(body, "alice-diary-private-marker") {
		t.Errorf("carol's own view lists alice's skill: %d %s", code, body)
	}
}

// A principal is never "everyone" by being nameless: a runner without a name sees the tenant's
// runs and no user's own, in memory (access.Principal.Sees) and in a store's query (Viewer). A nameless key was
// once a caller "" whose view was every run of the tenant, another user's arguments included.
func TestNamelessPrincipalSeesNoOnesOwnRuns(t *testing.T) {
	nameless := access.Principal{Tenant: "acme", Role: access.RoleRunner}
	if nameless.Sees("alice@acme") || !nameless.Sees("") {
		t.Errorf("a nameless runner: sees alice's %v, the tenant's %v", nameless.Sees("alice@acme"), nameless.Sees(""))
	}
	if v := nameless.Viewer(); v == "" || v == "alice@acme" {
		t.Errorf("a nameless runner's viewer is %q: a store would show it every run", v)
	}
	bob := access.Principal{Tenant: "acme", Role: access.RoleRunner, Key: "bob"}
	if bob.Sees("alice@acme") || !bob.Sees("bob") || bob.Viewer() != "bob" {
		t.Errorf("bob: sees alice's %v, his own %v, viewer %q", bob.Sees("alice@acme"), bob.Sees("bob"), bob.Viewer())
	}
	admin := access.Principal{Tenant: "acme", Role: access.RoleAdmin}
	if !admin.Sees("alice@acme") || admin.Viewer() != "" {
		t.Errorf("an admin: sees alice's %v, viewer %q", admin.Sees("alice@acme"), admin.Viewer())
	}
}
