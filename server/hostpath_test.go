package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNoHostPathReachesARemoteClient asks the HTTP API and the MCP endpoint everything a remote
// client can ask of skills that work, fail and break in every way, and checks that no answer
// names the directory the skills live in on the host: a remote client learns the layout of the
// server's disk from no rendering, error, problem or listing.
func TestNoHostPathReachesARemoteClient(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "host-skills-dir")
	fixture(t, dir, "greeter", manifestJSON("greeter", `"parameters":{"name":{"type":"string"}}`), "hello", map[string]string{
		"SKILL.md": "---\nname: greeter\ndescription: Greets.\n---\nRead ${CLAUDE_SKILL_DIR}/notes.md, then greet $ARGUMENTS.\n",
		"notes.md": "# notes\n",
	})
	writeFiles(t, dir, map[string]string{
		"guide/SKILL.md":           "---\nname: guide\ndescription: A guide to follow.\n---\nSee reference/api.md. $ARGUMENTS\n",
		"guide/reference/api.md":   "# API\n",
		"broken/skill.json":        `{"id": "broken", "name": `,
		"nomodule/skill.json":      manifestJSON("nomodule", ""),
		"garbage/skill.json":       manifestJSON("garbage", ""),
		"garbage/execute.wasm":     "\x00asm\x01\x00\x00\x00\xff\xff\xff",
		"badmd/SKILL.md":           "---\nname: [unclosed\n---\nbody\n",
		"mismatch/skill.json":      manifestJSON("other-id", ""),
		"outside/secret.txt":       "host secret\n",
		"greeter/reference/ok.txt": "ok\n",
	})
	fixture(t, dir, "trap", manifestJSON("trap", ""), "unreachable", nil)
	if err := os.Symlink(filepath.Join(dir, "outside", "secret.txt"), filepath.Join(dir, "greeter", "escape.txt")); err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, Options{}, dir)
	leaks := func(where string, body []byte) {
		t.Helper()
		for _, p := range []string{root, testCache} {
			if strings.Contains(string(body), p) {
				t.Errorf("%s hands a remote client the host path %s: %s", where, p, body)
			}
		}
	}

	// HTTP.
	var list struct {
		Skills []struct{ ID string } `json:"skills"`
	}
	r := get(t, env.ts.URL+"/v1/skills")
	leaks("GET /v1/skills", r.body)
	r.decode(t, &list)
	if len(list.Skills) < 8 {
		t.Fatalf("skills %s", r.body)
	}
	paths := []string{"/.well-known/skills.json", "/v1/tools?format=openai", "/v1/tools?format=anthropic", "/v1/tools?format=mcp", "/metrics"}
	for _, s := range list.Skills {
		for _, p := range []string{"", "/instructions", "/instructions?arguments=Ada", "/resources/SKILL.md", "/resources/escape.txt", "/resources/../outside/secret.txt", "/resources/nope"} {
			paths = append(paths, "/v1/skills/"+s.ID+p)
		}
	}
	for _, p := range paths {
		leaks("GET "+p, get(t, env.ts.URL+p).body)
	}
	for _, s := range list.Skills {
		for _, call := range []string{
			`{"name":"load_skill","arguments":{"name":"` + s.ID + `","arguments":"Ada"}}`,
			`{"name":"run_skill","arguments":{"skill":"` + s.ID + `"}}`,
			`{"name":"read_skill_resource","arguments":{"skill":"` + s.ID + `","resource":"escape.txt"}}`,
			`{"name":"skill_` + strings.ReplaceAll(s.ID, "-", "_") + `","arguments":{}}`,
		} {
			leaks("POST /v1/tools/call "+call, post(t, env.ts.URL+"/v1/tools/call", call).body)
		}
		r := post(t, env.ts.URL+"/v1/runs", `{"skill":"`+s.ID+`"}`)
		leaks("POST /v1/runs "+s.ID, r.body)
		var res struct {
			RunID string `json:"run_id"`
		}
		if json.Unmarshal(r.body, &res) == nil && res.RunID != "" {
			leaks("GET /v1/runs/"+res.RunID, get(t, env.ts.URL+"/v1/runs/"+res.RunID).body)
		}
	}
	leaks("POST /v1/tools/call list_skills", post(t, env.ts.URL+"/v1/tools/call", `{"name":"list_skills"}`).body)

	// MCP, in both revisions.
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", HTTPClient: http.DefaultClient}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		seen := func(where string, v any, err error) {
			t.Helper()
			data, _ := json.Marshal(v)
			if err != nil {
				data = append(data, err.Error()...)
			}
			leaks(protocol+" "+where, data)
		}
		tools, err := cs.ListTools(ctx, nil)
		seen("tools/list", tools, err)
		for _, tool := range tools.Tools {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: map[string]any{}})
			seen("tools/call "+tool.Name, res, err)
		}
		for _, s := range list.Skills {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": s.ID, "arguments": "Ada"}})
			seen("load_skill "+s.ID, res, err)
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://" + s.ID + "/escape.txt"})
			seen("resources/read escape "+s.ID, rr, err)
		}
		resources, err := cs.ListResources(ctx, nil)
		seen("resources/list", resources, err)
		for _, res := range resources.Resources {
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.URI})
			seen("resources/read "+res.URI, rr, err)
		}
		templates, err := cs.ListResourceTemplates(ctx, nil)
		seen("resources/templates/list", templates, err)
		prompts, err := cs.ListPrompts(ctx, nil)
		seen("prompts/list", prompts, err)
		for _, p := range prompts.Prompts {
			gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: map[string]string{"arguments": "Ada"}})
			seen("prompts/get "+p.Name, gp, err)
		}
	}
}
