package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
)

const createSkillArgs = `{"id":"adder","manifest":{"id":"adder","name":"Adder","description":"Adds.",
 "parameters":{"a":{"type":"number","required":true},"b":{"type":"number","required":true}}},
 "files":{"execute.js":"export function execute(args) { return args.a + args.b; }"}}`

// The authoring tools are listed and answered over HTTP and MCP only for the author role, and
// only where the policy lets agents write skills.
func TestAuthoringToolsByRole(t *testing.T) {
	t.Parallel()
	cfg := runtime.Config{Policy: &policy.Policy{AgentSkills: policy.AgentSkills{Enabled: true}}}
	env := newEnvRuntime(t, keysOptions(), cfg, t.TempDir())
	listed := func(key string) bool {
		r := get(t, env.ts.URL+"/v1/tools?format=mcp", "X-API-Key", key)
		return strings.Contains(string(r.body), `"create_skill"`)
	}
	if listed(roleKeys[access.RoleRunner]) || !listed(roleKeys[access.RoleAuthor]) {
		t.Fatalf("GET /v1/tools: runner sees create_skill %v, author %v", listed(roleKeys[access.RoleRunner]), listed(roleKeys[access.RoleAuthor]))
	}
	call := func(key, name, args string) toolCallResponse {
		body, _ := json.Marshal(map[string]any{"name": name, "arguments": json.RawMessage(args)})
		r := post(t, env.ts.URL+"/v1/tools/call", string(body), "X-API-Key", key)
		var out toolCallResponse
		r.decode(t, &out)
		return out
	}
	if out := call(roleKeys[access.RoleRunner], "create_skill", createSkillArgs); !out.IsError || !strings.Contains(out.Text, "author role") {
		t.Fatalf("runner's create_skill: %+v", out)
	}
	if out := call(roleKeys[access.RoleAuthor], "create_skill", createSkillArgs); out.IsError {
		t.Fatalf("author's create_skill: %+v", out)
	}
	if out := call(roleKeys[access.RoleRunner], "skill_adder", `{"a":1,"b":2}`); out.IsError || out.Text != "3" {
		t.Fatalf("run of the new skill: %+v", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	session := func(key string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{key}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// tools/list offers them as GET /v1/tools does: to the author, not to the runner.
	mcpListed := func(key string) bool {
		l, err := session(key).ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(l.Tools, func(tool *mcp.Tool) bool { return tool.Name == "create_skill" })
	}
	if mcpListed(roleKeys[access.RoleRunner]) || !mcpListed(roleKeys[access.RoleAuthor]) {
		t.Fatalf("MCP tools/list: runner sees create_skill %v, author %v", mcpListed(roleKeys[access.RoleRunner]), mcpListed(roleKeys[access.RoleAuthor]))
	}
	del := &mcp.CallToolParams{Name: "delete_skill", Arguments: map[string]any{"id": "adder"}}
	res, err := session(roleKeys[access.RoleRunner]).CallTool(ctx, del)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "author role") {
		t.Fatalf("runner's delete_skill over MCP: %v %+v", err, res)
	}
	res, err = session(roleKeys[access.RoleAuthor]).CallTool(ctx, del)
	if err != nil || res.IsError {
		t.Fatalf("author's delete_skill over MCP: %v %+v", err, res)
	}
	if _, err := env.rt.Skill("adder"); err == nil {
		t.Fatal("not deleted")
	}
}

// With ToolNames devai, both faces offer and answer the management tools by Devai's names, to
// whom create_skill would be offered: a backend written for Devai creates a skill over HTTP and
// its MCP client lists and runs it.
func TestDevaiToolNamesOverHTTPAndMCP(t *testing.T) {
	t.Parallel()
	cfg := runtime.Config{Policy: &policy.Policy{AgentSkills: policy.AgentSkills{Enabled: true}}}
	opts := keysOptions()
	opts.ToolNames = toolset.NamingDevai
	env := newEnvRuntime(t, opts, cfg, t.TempDir())
	listed := func(key string) string {
		return string(get(t, env.ts.URL+"/v1/tools?format=openai", "X-API-Key", key).body)
	}
	if l := listed(roleKeys[access.RoleAuthor]); !strings.Contains(l, `"skill_create"`) || strings.Contains(l, `"create_skill"`) {
		t.Fatalf("GET /v1/tools for an author: %s", l)
	}
	if l := listed(roleKeys[access.RoleRunner]); strings.Contains(l, `"skill_create"`) || !strings.Contains(l, `"skill_list"`) {
		t.Fatalf("GET /v1/tools for a runner: %s", l)
	}
	body, _ := json.Marshal(map[string]any{"name": "skill_create", "arguments": map[string]any{
		"id": "adder", "name": "Adder", "description": "Adds.", "tags": []string{"math"},
		"parameters": map[string]any{"a": map[string]any{"type": "number", "required": true}, "b": map[string]any{"type": "number", "required": true}},
		"code":       "export function execute(args: {a: number, b: number}) { return args.a + args.b; }"}})
	var out toolCallResponse
	post(t, env.ts.URL+"/v1/tools/call", string(body), "X-API-Key", roleKeys[access.RoleAuthor]).decode(t, &out)
	if out.IsError {
		t.Fatalf("skill_create over HTTP: %+v", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{roleKeys[access.RoleAuthor]}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	l, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range l.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"skill_create", "skill_update", "skill_delete", "skill_reload", "skill_list", "skill_adder"} {
		if !slices.Contains(names, want) {
			t.Errorf("MCP tools/list %v: no %s", names, want)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_list", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"status":"active"`) {
		t.Fatalf("skill_list over MCP: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_adder", Arguments: map[string]any{"a": 1, "b": 2}})
	if sc, _ := res.StructuredContent.(map[string]any); err != nil || res.IsError || sc["result"] != 3.0 {
		t.Fatalf("the new skill over MCP: %v %+v", err, res)
	}
}
