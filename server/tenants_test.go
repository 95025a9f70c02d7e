package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
	"github.com/skillbox-dev/skillbox/version"
)

// tenantEnv is a server with two tenants, acme and globex, on one Shared and one SQLite store,
// besides the default tenant: each with its own echo skill (acme-notes, globex-ledger) whose
// description carries a marker only that tenant may ever read.
type tenantEnv struct {
	ts    *httptest.Server
	store store.Store
}

const (
	acmeKey   = "acme-admin-key-0123456789"
	globexKey = "globex-admin-key-0123456789"
	rootKey   = "root-admin-key-0123456789"
)

func newTenantEnv(t *testing.T, acmeQuota runtime.Quota) *tenantEnv {
	t.Helper()
	ctx := context.Background()
	st, rec := testStore(t)
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: testCache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close(ctx) })
	pol := &policy.Policy{Runs: policy.Runs{RecordArguments: true}}
	mk := func(tenant, skill string, quota runtime.Quota) *runtime.Runtime {
		dir := t.TempDir()
		// Each skill echoes its arguments; globex's also leaves a file in /output.
		wasm, perms := "echo", ""
		if tenant == "globex" {
			wasm, perms = "output", `,"permissions":{"files":[{"path":"/output","access":"read-write"}]}`
		}
		fixture(t, dir, skill, manifestJSON(skill, `"version":"1.0.0","description":"the `+skill+`-private-marker skill","parameters":{"type":"object"}`+perms), wasm, nil)
		var vs version.Store = st
		var arts artifact.Store = rec
		if tenant != "" {
			vs, arts = st.Tenant(tenant), rec.Artifacts(tenant)
		}
		rt, err := runtime.New(ctx, runtime.Config{Shared: sh, Tenant: tenant, SkillDirs: []string{dir}, Policy: pol,
			Recorder: rec, Versions: vs, Artifacts: arts, Quota: quota, NoBackgroundCheck: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		return rt
	}
	root := mk("", "root-tools", runtime.Quota{})
	srv, err := New(root, Options{History: st,
		Keys: []APIKey{{Name: "root", Key: rootKey, Role: access.RoleAdmin},
			{Name: "acme-admin", Key: acmeKey, Role: access.RoleAdmin, Tenant: "acme", User: "alice@acme"},
			{Name: "globex-admin", Key: globexKey, Role: access.RoleAdmin, Tenant: "globex", User: "bob@globex"}},
		Tenants: map[string]Tenant{
			"acme":   {Runtime: mk("acme", "acme-notes", acmeQuota), History: st.Tenant("acme")},
			"globex": {Runtime: mk("globex", "globex-ledger", runtime.Quota{}), History: st.Tenant("globex")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &tenantEnv{ts: ts, store: st}
}

// mcpSession is a session of the official MCP client with the server at base, as key; closed
// when t ends.
func mcpSession(t testing.TB, ctx context.Context, base, key string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: keyTransport{key}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// testStore is a fresh SQLite store and a recorder on it, closed when t ends.
func testStore(t testing.TB) (store.Store, *store.Recorder) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db", sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rec := storetest.NewRecorder(t, st, store.RecorderOptions{})
	return st, rec
}

// runAs runs skill with args as key and returns the run id.
func (e *tenantEnv) runAs(t *testing.T, key, skill, args string) string {
	t.Helper()
	code, body := do(t, "POST", e.ts.URL+"/v1/skills/"+skill+"/runs", `{"args":`+args+`}`, "X-API-Key", key)
	if code != http.StatusOK {
		t.Fatalf("run %s: %d %s", skill, code, body)
	}
	var res struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal([]byte(body), &res)
	return res.RunID
}

// A key of one tenant never reads anything of another tenant through any endpoint: every GET
// route, filled with the other tenant's skill id, run id and version digest, answers without a
// byte of it; runs, tool calls and MCP do not reach the other tenant's skills either.
func TestTenantIsolation(t *testing.T) {
	e := newTenantEnv(t, runtime.Quota{})
	ctx := t.Context()
	globexRun := e.runAs(t, globexKey, "globex-ledger", `{"a":"globex-file-marker.txt*7","secret":"globex-arg-marker"}`)
	artifact := "/v1/runs/" + globexRun + "/artifacts/globex-file-marker.txt"
	if code, body := do(t, "GET", e.ts.URL+artifact, "", "X-API-Key", globexKey); code != 200 || body != "xxxxxxx" {
		t.Fatalf("globex's own artifact: %d %q", code, body)
	}
	acmeRun := e.runAs(t, acmeKey, "acme-notes", `{"note":"acme-arg-marker"}`)
	vs, err := e.store.Tenant("globex").Versions(ctx, "globex-ledger")
	if err != nil || len(vs) != 1 {
		t.Fatalf("globex's version: %v, %v", vs, err)
	}
	globexDigest := vs[0].Digest
	// What only globex may see: its skill's marker, its run's arguments and id, its user.
	secrets := []string{"globex-ledger-private-marker", "globex-arg-marker", globexRun, "bob@globex", "xxxxxxx"}

	// Every GET route of the API, its parameters filled with globex's identifiers.
	fill := strings.NewReplacer(":id", "globex-ledger", ":run_id", globexRun, ":digest", globexDigest,
		":archive", "globex-ledger.zip", ":script", "run.py", ":path", "SKILL.md")
	paths := []string{}
	for _, r := range echoRoutes(t, e) {
		if r.Method == http.MethodGet {
			paths = append(paths, fill.Replace(r.Path))
		}
	}
	paths = append(paths, "/v1/runs?skill=globex-ledger", "/v1/tools?tools=all", artifact)
	for _, p := range paths {
		code, body := do(t, "GET", e.ts.URL+p, "", "X-API-Key", acmeKey)
		if code >= 500 {
			t.Errorf("GET %s as acme: %d %s", p, code, body)
		}
		for _, s := range secrets {
			// A 404 may repeat the id the client asked for; nothing else of globex's.
			if strings.Contains(body, s) && (s != globexRun || code < 400) {
				t.Errorf("GET %s as acme shows globex's %q: %d %s", p, s, code, body)
			}
		}
	}
	if len(paths) < 15 {
		t.Fatalf("only %d GET routes checked: the route listing is broken", len(paths))
	}
	// Acme's own things are there for acme (the check above is not vacuous).
	for p, want := range map[string]string{"/v1/skills": "acme-notes-private-marker", "/v1/runs": acmeRun, "/v1/runs/" + acmeRun: "alice@acme"} {
		if code, body := do(t, "GET", e.ts.URL+p, "", "X-API-Key", acmeKey); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s as acme: %d, want %q in %s", p, code, want, body)
		}
	}
	// Neither the default tenant's key sees a tenant's runs.
	if _, body := do(t, "GET", e.ts.URL+"/v1/runs", "", "X-API-Key", rootKey); strings.Contains(body, globexRun) || strings.Contains(body, acmeRun) {
		t.Errorf("the default tenant lists the tenants' runs: %s", body)
	}

	// Acting: run, call as a tool, search, change a version, delete: none reaches globex.
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/skills/globex-ledger/runs", `{"args":{}}`},
		{"POST", "/v1/runs", `{"skill":"globex-ledger","args":{}}`},
		{"POST", "/v1/tools/call", `{"name":"skill_globex_ledger","arguments":{}}`},
		{"POST", "/v1/skills/search", `{"query":"globex ledger private marker"}`},
		{"POST", "/v1/skills/globex-ledger/versions/" + globexDigest + "/yank", `{}`},
		{"DELETE", "/v1/skills/globex-ledger", ``},
		{"POST", "/v1/runs/" + globexRun + "/cancel", `{}`},
	} {
		code, body := do(t, c.method, e.ts.URL+c.path, c.body, "X-API-Key", acmeKey)
		refused := code >= 400 && code < 500
		switch c.path {
		case "/v1/skills/search": // answers, with acme's skills only
			refused = code == 200
		case "/v1/tools/call": // a tool call's failure is its result
			refused = code == 200 && strings.Contains(body, `"is_error":true`) && strings.Contains(body, `"not_found"`)
		}
		if !refused {
			t.Errorf("%s %s as acme: %d %s", c.method, c.path, code, body)
		}
		for _, s := range secrets {
			if strings.Contains(body, s) && (s != globexRun || code < 400) { // a 404 may repeat the id asked for
				t.Errorf("%s %s as acme shows globex's %q: %s", c.method, c.path, s, body)
			}
		}
	}
	if code, body := do(t, "POST", e.ts.URL+"/v1/skills/globex-ledger/runs", `{"args":{}}`, "X-API-Key", globexKey); code != 200 {
		t.Fatalf("globex's skill after acme's attempts: %d %s", code, body)
	}

	// MCP, with the official client: acme's session lists acme's tools only.
	cctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	cs := mcpSession(t, cctx, e.ts.URL, acmeKey)
	tools, err := cs.ListTools(cctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := ""
	for _, tool := range tools.Tools {
		names += tool.Name + " "
	}
	if !strings.Contains(names, "acme_notes") || strings.Contains(names, "globex") || strings.Contains(names, "root_tools") {
		t.Errorf("acme's MCP tools: %s", names)
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": "globex-ledger"}})
	if err == nil && !res.IsError {
		t.Errorf("acme loaded globex's skill over MCP: %+v", res.Content)
	}
}

// A tenant past its quota is answered 429 quota_exceeded with Retry-After; the other tenant runs.
func TestTenantQuotaOverHTTP(t *testing.T) {
	e := newTenantEnv(t, runtime.Quota{RunsPerMinute: 2})
	for range 2 {
		e.runAs(t, acmeKey, "acme-notes", `{}`)
	}
	r := send(t, "POST", e.ts.URL+"/v1/skills/acme-notes/runs", strings.NewReader(`{"args":{}}`), "Content-Type", "application/json", "X-API-Key", acmeKey)
	if r.status != http.StatusTooManyRequests || !strings.Contains(string(r.body), `"quota_exceeded"`) || r.header.Get("Retry-After") == "" {
		t.Fatalf("acme's third run in a minute: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	e.runAs(t, globexKey, "globex-ledger", `{}`)
}

// echoRoutes are the routes of the env's server, as its OpenAPI document lists them (a test
// holds the document to every route the server mounts), in echo's :param form.
func echoRoutes(t *testing.T, e *tenantEnv) []routeInfo {
	t.Helper()
	code, body := do(t, "GET", e.ts.URL+"/openapi.json", "")
	if code != 200 {
		t.Fatalf("openapi: %d", code)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	var out []routeInfo
	for p, ops := range doc.Paths {
		for m := range ops {
			// OpenAPI's {name} to echo's :name.
			path := p
			for strings.Contains(path, "{") {
				i, j := strings.Index(path, "{"), strings.Index(path, "}")
				path = path[:i] + ":" + path[i+1:j] + path[j+1:]
			}
			out = append(out, routeInfo{Method: strings.ToUpper(m), Path: path})
		}
	}
	return out
}

type routeInfo struct{ Method, Path string }

// GET /v1/tenants shows the operator every tenant and a tenant's admin their own alone: each
// tenant's skill count, quota, keys by name and role, and users, never a key. Other roles are
// refused; a keyless server is its operator's, with no keys to show.
func TestListTenants(t *testing.T) {
	t.Parallel()
	env := newTenantEnv(t, runtime.Quota{ConcurrentRuns: 2, RunsPerMinute: 60})
	users, _ := newUsersEnv(t)
	keyless := newEnv(t, Options{}, t.TempDir())
	list := func(url, key string) string {
		t.Helper()
		var header []string
		if key != "" {
			header = []string{"X-API-Key", key}
		}
		r := get(t, url+"/v1/tenants", header...)
		if r.status != http.StatusOK {
			t.Fatalf("GET /v1/tenants as %q: %s", key, r)
		}
		for _, k := range []string{acmeKey, globexKey, rootKey, aliceKey, bobKey, carolKey} {
			if strings.Contains(string(r.body), k) {
				t.Fatalf("GET /v1/tenants hands out a key: %s", r.body)
			}
		}
		var out struct {
			Tenants []tenantInfo `json:"tenants"`
		}
		r.decode(t, &out)
		var lines []string
		for _, tn := range out.Tenants {
			line := fmt.Sprintf("%q skills=%d quota=%d/%d users=%v keys=", tn.Name, tn.Skills, tn.Quota.ConcurrentRuns, tn.Quota.RunsPerMinute, tn.Users)
			for _, k := range tn.Keys {
				line += k.Name + ":" + k.Role + ":" + k.User + " "
			}
			lines = append(lines, line)
		}
		return strings.Join(lines, "\n")
	}
	root := `"" skills=1 quota=0/0 users=[] keys=root:admin: ` + "\n" +
		`"acme" skills=1 quota=2/60 users=[alice@acme] keys=acme-admin:admin:alice@acme ` + "\n" +
		`"globex" skills=1 quota=0/0 users=[bob@globex] keys=globex-admin:admin:bob@globex `
	for _, tc := range []struct{ url, key, want string }{
		{env.ts.URL, rootKey, root},
		{env.ts.URL, acmeKey, `"acme" skills=1 quota=2/60 users=[alice@acme] keys=acme-admin:admin:alice@acme `},
		{users.URL, carolKey, `"acme" skills=1 quota=0/0 users=[alice@acme bob@acme carol@acme] keys=alice:author:alice@acme bob:author:bob@acme carol:admin:carol@acme `},
		{keyless.ts.URL, "", `"" skills=0 quota=0/0 users=[] keys=`},
	} {
		if got := list(tc.url, tc.key); got != tc.want {
			t.Errorf("GET /v1/tenants as %q:\n%s\nwant\n%s", tc.key, got, tc.want)
		}
	}
	wantError(t, get(t, users.URL+"/v1/tenants", "X-API-Key", aliceKey), http.StatusForbidden, "forbidden")
	wantError(t, get(t, env.ts.URL+"/v1/tenants"), http.StatusUnauthorized, "unauthorized")
}
