package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/runtime"
)

var roleKeys = map[access.Role]string{
	access.RoleViewer: "viewer-key-0123456789abcdef",
	access.RoleRunner: "runner-key-0123456789abcdef",
	access.RoleAuthor: "author-key-0123456789abcdef",
	access.RoleAdmin:  "admin-key-0123456789abcdef!",
}

var roles = []access.Role{access.RoleViewer, access.RoleRunner, access.RoleAuthor, access.RoleAdmin}

func keysOptions() Options {
	var keys []APIKey
	for _, r := range roles {
		keys = append(keys, APIKey{Name: r.String() + "-client", Key: roleKeys[r], Role: r})
	}
	return Options{Keys: keys}
}

// authEnv is the WAT skills behind the four keys, plus a skill per role to try to delete.
func authEnv(t *testing.T, opts Options) *testEnv {
	t.Helper()
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", ""), "hello", nil)
	fixture(t, dir, "echo", manifestJSON("echo", `"parameters":{"type":"object"}`), "echo", nil)
	for _, r := range roles {
		id := "doomed-" + r.String()
		fixture(t, dir, id, manifestJSON(id, ""), "hello", nil)
	}
	return newEnv(t, opts, dir)
}

func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	env := authEnv(t, keysOptions())
	u := env.ts.URL
	type endpoint struct {
		name string
		need access.Role
		want int // when allowed
		call func(t *testing.T, role access.Role, auth ...string) reply
	}
	endpoints := []endpoint{
		{"list", access.RoleViewer, 200, func(t *testing.T, _ access.Role, h ...string) reply { return get(t, u+"/v1/skills", h...) }},
		{"detail", access.RoleViewer, 200, func(t *testing.T, _ access.Role, h ...string) reply { return get(t, u+"/v1/skills/hello", h...) }},
		{"resource", access.RoleViewer, 200, func(t *testing.T, _ access.Role, h ...string) reply {
			return get(t, u+"/v1/skills/hello/resources/skill.json", h...)
		}},
		{"metrics", access.RoleViewer, 200, func(t *testing.T, _ access.Role, h ...string) reply { return get(t, u+"/metrics", h...) }},
		{"tools", access.RoleViewer, 200, func(t *testing.T, _ access.Role, h ...string) reply { return get(t, u+"/v1/tools", h...) }},
		{"well-known", access.RoleViewer, 200, func(t *testing.T, _ access.Role, h ...string) reply {
			return get(t, u+"/.well-known/skills.json", h...)
		}},
		{"search", access.RoleViewer, 200, func(t *testing.T, _ access.Role, h ...string) reply {
			return post(t, u+"/v1/skills/search", `{"query":"x"}`, h...)
		}},
		{"run history", access.RoleViewer, 404, func(t *testing.T, _ access.Role, h ...string) reply { return get(t, u+"/v1/runs/run_unknown", h...) }},
		{"run", access.RoleRunner, 200, func(t *testing.T, _ access.Role, h ...string) reply {
			return post(t, u+"/v1/skills/hello/runs", `{}`, h...)
		}},
		{"run any", access.RoleRunner, 200, func(t *testing.T, _ access.Role, h ...string) reply {
			return post(t, u+"/v1/runs", `{"skill":"hello"}`, h...)
		}},
		{"create", access.RoleAuthor, 201, func(t *testing.T, r access.Role, h ...string) reply {
			id := "made-by-" + r.String()
			return upload(t, "POST", u+"/v1/skills", pkg{"skill.json": []byte(manifestJSON(id, "")), "execute.wasm": wasmFixture(t, "hello")}, nil, h...)
		}},
		{"update", access.RoleAuthor, 200, func(t *testing.T, r access.Role, h ...string) reply {
			return uploadTar(t, "PUT", u+"/v1/skills/echo", tarOf(pkg{"skill.json": []byte(manifestJSON("echo", `"parameters":{"type":"object"}`)), "execute.wasm": wasmFixture(t, "echo")}, ""), h...)
		}},
		{"delete", access.RoleAdmin, 204, func(t *testing.T, r access.Role, h ...string) reply {
			return send(t, "DELETE", u+"/v1/skills/doomed-"+r.String(), nil, h...)
		}},
		{"reload", access.RoleAdmin, 200, func(t *testing.T, _ access.Role, h ...string) reply { return post(t, u+"/v1/reload", "", h...) }},
	}
	for _, ep := range endpoints {
		for _, role := range roles {
			t.Run(ep.name+"/"+role.String(), func(t *testing.T) {
				r := ep.call(t, role, "Authorization", "Bearer "+roleKeys[role])
				if role >= ep.need {
					if r.status != ep.want {
						t.Errorf("%s may %s: got %s, want %d", role, ep.name, r, ep.want)
					}
					return
				}
				e := wantError(t, r, http.StatusForbidden, "forbidden")
				if !strings.Contains(e.Error.Message, ep.need.String()) || !strings.Contains(e.Error.Message, role.String()+"-client") {
					t.Errorf("the message should name the role needed and the key: %q", e.Error.Message)
				}
			})
		}
	}
	// Refused requests changed nothing: only the admin's skill is gone, only author+ created.
	for _, role := range roles {
		deleted := get(t, u+"/v1/skills/doomed-"+role.String(), "X-API-Key", roleKeys[access.RoleViewer]).status == 404
		created := get(t, u+"/v1/skills/made-by-"+role.String(), "X-API-Key", roleKeys[access.RoleViewer]).status == 200
		if deleted != (role == access.RoleAdmin) || created != (role >= access.RoleAuthor) {
			t.Errorf("%s: deleted %v, created %v", role, deleted, created)
		}
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	env := authEnv(t, keysOptions())
	url := env.ts.URL + "/v1/skills"
	viewer := roleKeys[access.RoleViewer]
	tests := []struct {
		name   string
		header []string // given
		status int      // expect
	}{
		{"no key", nil, 401},
		{"wrong key", []string{"Authorization", "Bearer wrong-key-0123456789abcdef"}, 401},
		{"a key's prefix", []string{"Authorization", "Bearer " + viewer[:20]}, 401},
		{"a key plus a suffix", []string{"Authorization", "Bearer " + viewer + "x"}, 401},
		{"empty bearer", []string{"Authorization", "Bearer "}, 401},
		{"basic auth", []string{"Authorization", "Basic dmlld2VyOg=="}, 401},
		{"key without a scheme", []string{"Authorization", viewer}, 401},
		{"bearer", []string{"Authorization", "Bearer " + viewer}, 200},
		{"bearer, lower case", []string{"Authorization", "bearer " + viewer}, 200},
		{"bearer, extra spaces", []string{"Authorization", "Bearer   " + viewer + " "}, 200},
		{"X-API-Key", []string{"X-API-Key", viewer}, 200},
		{"x-api-key, lower case", []string{"x-api-key", viewer}, 200},
		// Either header may carry the key: a stale one does not hide a good one.
		{"wrong X-API-Key with a good bearer", []string{"X-API-Key", "nope", "Authorization", "Bearer " + viewer}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := get(t, url, tc.header...)
			if tc.status == 200 {
				if r.status != 200 {
					t.Errorf("%s", r)
				}
				return
			}
			wantError(t, r, 401, "unauthorized")
			if got := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Errorf("WWW-Authenticate %q", got)
			}
			if strings.Contains(string(r.body), viewer) {
				t.Errorf("the reply echoes the key: %s", r.body)
			}
		})
	}
	t.Run("key in the query string is not a key", func(t *testing.T) {
		wantError(t, get(t, url+"?api_key="+viewer), 401, "unauthorized")
	})
	t.Run("unknown route asks for a key first", func(t *testing.T) {
		r := get(t, env.ts.URL+"/v1/nothing")
		if r.status != 401 && r.status != 404 {
			t.Errorf("%s", r)
		}
	})
}

// healthz, readyz and openapi.json are documented as needing no key (README, openapi.json's
// "security": []): a load balancer's probe has none.
func TestPublicEndpointsNeedNoKey(t *testing.T) {
	t.Parallel()
	env := authEnv(t, keysOptions())
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json"} {
		t.Run(path, func(t *testing.T) {
			r := get(t, env.ts.URL+path)
			if r.status == 401 {

			}
			if r.status != 200 {
				t.Errorf("%s without a key: %s", path, r)
			}
		})
	}
}

func TestNewRefusesBadConfiguration(t *testing.T) {
	t.Parallel()
	rt, err := runtime.New(context.Background(), runtime.Config{Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	long := "0123456789abcdef"
	tests := []struct {
		name string
		rt   *runtime.Runtime
		opts Options // given
		want string  // expect an error containing this, or "" for none
	}{
		{"no keys", rt, Options{}, ""},
		{"good keys", rt, Options{Keys: []APIKey{{Name: "a", Key: long, Role: access.RoleViewer}, {Name: "b", Key: long + "x", Role: access.RoleAdmin}}}, ""},
		{"nil runtime", nil, Options{}, "nil runtime"},
		{"short key", rt, Options{Keys: []APIKey{{Name: "short", Key: "0123456789abcde", Role: access.RoleAdmin}}}, "short"},
		{"empty key", rt, Options{Keys: []APIKey{{Name: "empty", Role: access.RoleAdmin}}}, "empty"},
		{"duplicate key", rt, Options{Keys: []APIKey{{Name: "one", Key: long, Role: access.RoleViewer}, {Name: "two", Key: long, Role: access.RoleAdmin}}}, "two"},
		{"no role", rt, Options{Keys: []APIKey{{Name: "norole", Key: long}}}, "norole"},
		{"role past admin", rt, Options{Keys: []APIKey{{Name: "god", Key: long, Role: access.RoleAdmin + 1}}}, "god"},
		{"negative role", rt, Options{Keys: []APIKey{{Name: "neg", Key: long, Role: -1}}}, "neg"},
		{"no name", rt, Options{Keys: []APIKey{{Name: "a", Key: long, Role: access.RoleViewer}, {Key: long + "x", Role: access.RoleRunner}}}, "key 1 has no name"},
		{"blank name", rt, Options{Keys: []APIKey{{Name: "  ", Key: long, Role: access.RoleRunner, User: "bob"}}}, "key 0 has no name"},
		{"negative package limit", rt, Options{MaxPackageBytes: -1}, "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.rt, tc.opts)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			case tc.want != "" && s != nil:
				t.Errorf("a server despite the error")
			}
			if err != nil && strings.Contains(err.Error(), long) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

func TestParseRole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want access.Role
		ok   bool
	}{{"viewer", access.RoleViewer, true}, {"Runner", access.RoleRunner, true}, {"AUTHOR", access.RoleAuthor, true}, {"admin", access.RoleAdmin, true}, {"root", 0, false}, {"", 0, false}} {
		r, err := access.ParseRole(tc.in)
		if r != tc.want || (err == nil) != tc.ok {
			t.Errorf("access.ParseRole(%q) = %v, %v", tc.in, r, err)
		}
		if tc.ok && r.String() != strings.ToLower(tc.in) {
			t.Errorf("%v.String() = %q", r, r.String())
		}
	}
}

// Not parallel: t.Setenv.
func TestLoadKeys(t *testing.T) {
	t.Setenv("SKILLBOX_TEST_KEY", "from-the-environment-0123")
	t.Setenv("SKILLBOX_TEST_SHORT", "short")
	dir := t.TempDir()
	tests := []struct {
		name, yaml string // given
		want       []APIKey
		err        string // expect
	}{
		{"keys and roles", "- name: ci\n  key: ci-key-0123456789abcdef\n  role: runner\n- name: ops\n  key: env:SKILLBOX_TEST_KEY\n  role: Admin\n",
			[]APIKey{{Name: "ci", Key: "ci-key-0123456789abcdef", Role: access.RoleRunner}, {Name: "ops", Key: "from-the-environment-0123", Role: access.RoleAdmin}}, ""},
		{"bad role", "- name: x\n  key: x-key-0123456789abcdef\n  role: root\n", nil, "root"},
		{"no role", "- name: x\n  key: x-key-0123456789abcdef\n", nil, "role"},
		{"short key", "- name: x\n  key: short\n  role: viewer\n", nil, "16"},
		{"short key from env", "- name: x\n  key: env:SKILLBOX_TEST_SHORT\n  role: viewer\n", nil, "16"},
		{"unset env var", "- name: x\n  key: env:SKILLBOX_TEST_UNSET_VAR\n  role: viewer\n", nil, "x"},
		{"not a list", "name: x\nkey: y\n", nil, "keys.yaml"},
		{"no name", "- name: ci\n  key: ci-key-0123456789abcdef\n  role: runner\n- key: x-key-0123456789abcdef\n  role: runner\n", nil, "keys.yaml: key 1: no name"},
		{"not YAML", "- [", nil, "keys.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "keys.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			keys, err := LoadKeys(path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want one containing %q", err, tc.err)
				}
				if err != nil && (strings.Contains(err.Error(), "x-key-0123456789abcdef") || strings.Contains(err.Error(), "from-the-environment")) {
					t.Errorf("the error shows a key: %v", err)
				}
				return
			}
			if err != nil || fmt.Sprint(keys) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, %v; want %v", keys, err, tc.want)
			}
		})
	}
	if _, err := LoadKeys(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing file loaded")
	}
	// The loaded keys work.
	path := filepath.Join(dir, "keys.yaml")
	os.WriteFile(path, []byte("- name: ops\n  key: env:SKILLBOX_TEST_KEY\n  role: admin\n"), 0o600)
	keys, err := LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	env := watEnv(t, Options{Keys: keys}, 100)
	if r := post(t, env.ts.URL+"/v1/reload", "", "X-API-Key", "from-the-environment-0123"); r.status != 200 {
		t.Errorf("env key: %s", r)
	}
}

// GET /v1/me says who a key is, for any role, and never the key itself; without a valid key it
// is 401 like every guarded route; on a keyless server it is the operator's admin, unasked.
func TestMe(t *testing.T) {
	t.Parallel()
	env := authEnv(t, keysOptions())
	users, _ := newUsersEnv(t)
	keyless := authEnv(t, Options{})
	me := func(url string, header ...string) identity {
		t.Helper()
		r := get(t, url+"/v1/me", header...)
		if r.status != 200 {
			t.Fatalf("GET /v1/me %v: %s", header, r)
		}
		for _, k := range append(slices.Collect(maps.Values(roleKeys)), carolKey) {
			if strings.Contains(string(r.body), k) {
				t.Fatalf("GET /v1/me hands back a key: %s", r.body)
			}
		}
		var id identity
		r.decode(t, &id)
		return id
	}
	for _, tc := range []struct {
		url, key string
		want     identity
	}{
		{env.ts.URL, roleKeys[access.RoleViewer], identity{Role: "viewer", Caller: "viewer-client", Key: "viewer-client"}},
		{env.ts.URL, roleKeys[access.RoleAdmin], identity{Role: "admin", Caller: "admin-client", Key: "admin-client", Operator: true}},
		{users.URL, carolKey, identity{Role: "admin", Tenant: "acme", User: "carol@acme", Caller: "carol@acme", Key: "carol"}},
		{users.URL, aliceKey, identity{Role: "author", Tenant: "acme", User: "alice@acme", Caller: "alice@acme", Key: "alice"}},
	} {
		if got := me(tc.url, "Authorization", "Bearer "+tc.key); got != tc.want {
			t.Errorf("GET /v1/me = %+v, want %+v", got, tc.want)
		}
	}
	if got, want := me(keyless.ts.URL), (identity{Role: "admin", Caller: "anonymous", Key: "anonymous", Operator: true, Keyless: true}); got != want {
		t.Errorf("keyless: GET /v1/me = %+v, want %+v", got, want)
	}
	wantError(t, get(t, env.ts.URL+"/v1/me"), 401, "unauthorized")
	wantError(t, get(t, env.ts.URL+"/v1/me", "Authorization", "Bearer not-a-key-0123456789"), 401, "unauthorized")
}
