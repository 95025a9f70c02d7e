package server

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/runtime"
)

type openapiOperation struct {
	Responses map[string]json.RawMessage `json:"responses"`
	Security  *[]map[string][]string     `json:"security"`
}

type openapiDocument struct {
	OpenAPI string `json:"openapi"`
	// Paths holds each path's operations by method (and its "parameters").
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas         map[string]json.RawMessage `json:"schemas"`
		SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
	} `json:"components"`
}

// operation decodes one operation; ok is false when it is not documented.
func (d openapiDocument) operation(t *testing.T, path, method string) (openapiOperation, bool) {
	t.Helper()
	var op openapiOperation
	raw, ok := d.Paths[path][method]
	if !ok {
		return op, false
	}
	if err := json.Unmarshal(raw, &op); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return op, true
}

var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true, "trace": true}

func loadOpenAPI(t *testing.T) (openapiDocument, []byte) {
	t.Helper()
	data, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc openapiDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return doc, data
}

// mountedRoutes returns "method path" of every route Mount registers, in OpenAPI's path syntax.
func mountedRoutes(t *testing.T, prefix string) map[string]bool {
	t.Helper()
	rt, err := runtime.New(context.Background(), runtime.Config{Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	s, err := New(rt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	s.Mount(e.Group(prefix))
	out := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method == echo.RouteNotFound {
			continue // echo's catch-alls for group middleware
		}
		p, ok := strings.CutPrefix(r.Path, prefix)
		if !ok {
			t.Errorf("route %s outside the prefix", r.Path)
		}
		out[strings.ToLower(r.Method)+" "+openapiPath(p)] = true
	}
	return out
}

func TestOpenAPICoversRoutes(t *testing.T) {
	t.Parallel()
	doc, _ := loadOpenAPI(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			if httpMethods[m] {
				documented[m+" "+p] = true
			}
		}
	}
	for _, prefix := range []string{"", "/api/skills"} {
		routes := mountedRoutes(t, prefix)
		if len(routes) < 18 {
			t.Errorf("only %d routes under %q", len(routes), prefix)
		}
		for r := range routes {
			if !documented[r] {
				t.Errorf("route %q (prefix %q) is not in openapi.json", r, prefix)
			}
		}
		for d := range documented {
			if !routes[d] {
				t.Errorf("openapi.json documents %q, which is not a route (prefix %q)", d, prefix)
			}
		}
	}
}

func TestOpenAPIDocumentIsServedAndSound(t *testing.T) {
	t.Parallel()
	doc, data := loadOpenAPI(t)
	ts, _ := newTestServer(t, Options{})
	r := get(t, ts.URL+"/openapi.json")
	if r.status != 200 || string(r.body) != string(data) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("served document differs: %d %q", r.status, r.header.Get("Content-Type"))
	}
	// Every $ref resolves.
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if ref, ok := c.(string); ok && k == "$ref" {
					name, ok := strings.CutPrefix(ref, "#/components/schemas/")
					if _, exists := doc.Components.Schemas[name]; !ok || !exists {
						t.Errorf("dangling $ref %q", ref)
					}
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	var generic any
	json.Unmarshal(data, &generic)
	walk(generic)
	// Security: only the three public routes have none.
	public := map[string]bool{"/healthz": true, "/readyz": true, "/openapi.json": true}
	for p, ops := range doc.Paths {
		for m := range ops {
			if !httpMethods[m] {
				continue
			}
			op, _ := doc.operation(t, p, m)
			none := op.Security != nil && len(*op.Security) == 0
			if none != public[p] {
				t.Errorf("%s %s: security %v", m, p, op.Security)
			}
			if _, ok := op.Responses["401"]; !public[p] && !ok {
				t.Errorf("%s %s does not document 401", m, p)
			}
			// Every authenticated route refuses a foreign Host without keys; every one that
			// changes state refuses other web origins.
			if _, ok := op.Responses["421"]; !public[p] && !ok {
				t.Errorf("%s %s does not document 421", m, p)
			}
			if _, ok := op.Responses["403"]; m != "get" && m != "head" && !ok {
				t.Errorf("%s %s does not document 403", m, p)
			}
		}
	}
}

// Every status a handler answers is documented for its operation. The cases make each status
// happen for real.
func TestOpenAPIDocumentsEveryStatus(t *testing.T) {
	t.Parallel()
	doc, _ := loadOpenAPI(t)
	env, _ := docsEnv(t)
	small := newEnvRuntime(t, Options{MaxPackageBytes: 64}, runtime.Config{MaxArgsBytes: 64}, env.dir)
	tests := []struct {
		op     string // "method path" as documented
		status int
		send   func() reply
	}{
		{"get /v1/skills/{id}/instructions", 422, func() reply {
			// A file without frontmatter loads (as Claude Code loads it); YAML that no repair
			// mends does not.
			writeFiles(t, env.dir, map[string]string{"docs/SKILL.md": "---\nname: [unclosed\n---\nBody\n"})
			defer writeFiles(t, env.dir, map[string]string{"docs/SKILL.md": docsSkillMD})
			return get(t, env.ts.URL+"/v1/skills/docs/instructions")
		}},
		{"put /v1/skills/{id}", 415, func() reply {
			return send(t, "PUT", env.ts.URL+"/v1/skills/docs", strings.NewReader("{}"), "Content-Type", "application/json")
		}},
		{"put /v1/skills/{id}", 400, func() reply {
			return send(t, "PUT", env.ts.URL+"/v1/skills/docs", strings.NewReader("not gzip"), "Content-Type", "application/gzip")
		}},
		{"put /v1/skills/{id}", 413, func() reply {
			return uploadTar(t, "PUT", small.ts.URL+"/v1/skills/docs", tarOf(greeterPkg(t, "1", "hello"), ""))
		}},
		{"post /v1/skills", 413, func() reply { return upload(t, "POST", small.ts.URL+"/v1/skills", greeterPkg(t, "1", "hello"), nil) }},
		{"post /v1/skills/{id}/runs", 413, func() reply {
			return post(t, small.ts.URL+"/v1/skills/docs/runs", `{"args":{"q":"`+strings.Repeat("q", 2*envelopeBytes)+`"}}`)
		}},
		{"post /v1/skills/{id}/runs", 409, func() reply { return post(t, env.ts.URL+"/v1/skills/broken/runs", `{}`) }},
		{"get /v1/skills/{id}/resources/{path}", 400, func() reply { return get(t, env.ts.URL+"/v1/skills/docs/resources/../x") }},
		{"get /v1/skills/{id}/resources/{path}", 404, func() reply { return get(t, env.ts.URL+"/v1/skills/docs/resources/none") }},
		{"delete /v1/skills/{id}", 404, func() reply { return send(t, "DELETE", env.ts.URL+"/v1/skills/none", nil) }},
		{"post /v1/skills/search", 400, func() reply { return post(t, env.ts.URL+"/v1/skills/search", `{}`) }},
		{"get /v1/tools", 400, func() reply { return get(t, env.ts.URL+"/v1/tools?format=x") }},
		{"get /v1/tools", 400, func() reply { return get(t, env.ts.URL+"/v1/tools?tools=x") }},
		{"post /v1/tools/call", 400, func() reply { return post(t, env.ts.URL+"/v1/tools/call", `{}`) }},
		{"post /v1/tools/call", 413, func() reply {
			return post(t, small.ts.URL+"/v1/tools/call", `{"name":"list_skills","arguments":{"query":"`+strings.Repeat("q", 2*envelopeBytes)+`"}}`)
		}},
		{"post /v1/tools/call", 415, func() reply { return send(t, "POST", env.ts.URL+"/v1/tools/call", strings.NewReader("{}")) }},
		{"get /v1/runs/{run_id}", 404, func() reply { return get(t, env.ts.URL+"/v1/runs/x") }},
		{"get /v1/runs", 501, func() reply { return get(t, env.ts.URL+"/v1/runs") }},
		{"post /v1/skills/{id}/runs", 202, func() reply { return post(t, env.ts.URL+"/v1/skills/docs/runs?async=true", `{"args":{"q":"x"}}`) }},
		{"post /v1/runs", 400, func() reply { return post(t, env.ts.URL+"/v1/runs?async=yes", `{"skill":"docs"}`) }},
		{"get /v1/runs/{run_id}/events", 400, func() reply { return get(t, env.ts.URL+"/v1/runs/x/events?after=-1") }},
		{"get /v1/runs/{run_id}/events", 404, func() reply { return get(t, env.ts.URL+"/v1/runs/x/events") }},
		{"post /v1/runs/{run_id}/cancel", 404, func() reply { return post(t, env.ts.URL+"/v1/runs/x/cancel", "") }},
		{"post /v1/runs/{run_id}/cancel", 409, func() reply {
			id := runResult(t, post(t, env.ts.URL+"/v1/skills/docs/runs", `{"args":{"q":"x"}}`)).RunID
			return post(t, env.ts.URL+"/v1/runs/"+id+"/cancel", "")
		}},
		{"get /v1/skills", 421, func() reply { return get(t, env.ts.URL+"/v1/skills", "Host", "evil.example") }},
		{"post /mcp", 421, func() reply { return post(t, env.ts.URL+"/mcp", mcpInitialize, "Host", "evil.example") }},
		{"post /v1/reload", 403, func() reply { return post(t, env.ts.URL+"/v1/reload", "", "Origin", "https://evil.example") }},
		{"delete /v1/skills/{id}", 403, func() reply {
			return send(t, "DELETE", env.ts.URL+"/v1/skills/docs", nil, "Sec-Fetch-Site", "cross-site")
		}},
		{"post /v1/skills/{id}/runs", 415, func() reply {
			return send(t, "POST", env.ts.URL+"/v1/skills/docs/runs", strings.NewReader("{}"), "Content-Type", "text/plain")
		}},
		{"post /v1/runs", 415, func() reply { return send(t, "POST", env.ts.URL+"/v1/runs", strings.NewReader("{}")) }},
		{"post /v1/skills/search", 415, func() reply {
			return send(t, "POST", env.ts.URL+"/v1/skills/search", strings.NewReader("{}"), "Content-Type", "application/x-www-form-urlencoded")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.op+" "+strconv.Itoa(tc.status), func(t *testing.T) {
			r := tc.send()
			if r.status != tc.status {
				t.Fatalf("the case does not produce %d: %s", tc.status, r)
			}
			method, path, _ := strings.Cut(tc.op, " ")
			op, ok := doc.operation(t, path, method)
			if !ok {
				t.Fatalf("%s is not documented", tc.op)
			}
			if _, ok := op.Responses[strconv.Itoa(tc.status)]; !ok {
				var have []string
				for k := range op.Responses {
					have = append(have, k)
				}
				sort.Strings(have)
				t.Errorf("%s answers %d, openapi.json documents only %v", tc.op, tc.status, have)
			}
		})
	}
}
