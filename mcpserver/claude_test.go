package mcpserver_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
)

// claudeEnv serves ../testdata/claude-skills/manual (deploy: disable-model-invocation and an
// argument-hint; helper: an argument-hint) and ../testdata/claude-skills/names (directories whose
// names are no ids).
func claudeEnv(t *testing.T) *env {
	t.Helper()
	root := filepath.Join("..", "testdata", "claude-skills")
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{filepath.Join(root, "manual"), filepath.Join(root, "names")}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	srv := mcpserver.New(rt, mcpserver.Options{})
	t.Cleanup(srv.Close)
	return &env{rt: rt, srv: srv}
}

// TestMCPClaudeSkills: a prompt is the user's surface, so a skill kept from models
// (disable-model-invocation) is a prompt, rendered with its arguments as Claude Code renders
// them, and its argument-hint describes the prompt's argument; the model's tools (list_skills,
// load_skill) neither list nor load it. Skills in directories whose names are no ids are
// prompts and resources under their derived ids, titled with their names.
func TestMCPClaudeSkills(t *testing.T) {
	t.Parallel()
	e := claudeEnv(t)
	cs := e.connect(t, legacyProtocol, nil)
	ctx := testContext(t)
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	prompts := map[string]*mcp.Prompt{}
	for _, p := range list.Prompts {
		prompts[p.Name] = p
	}
	deploy := prompts["deploy"]
	if deploy == nil || len(deploy.Arguments) != 1 || !strings.HasSuffix(deploy.Arguments[0].Description, ". Expected: [environment] [version]") {
		t.Fatalf("deploy prompt: %+v", deploy)
	}
	if p := prompts["my-skill"]; p == nil || p.Title != "My_Skill" {
		t.Errorf("my-skill prompt: %+v", p)
	}
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "deploy", Arguments: map[string]string{"arguments": "staging v2"}})
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(filepath.Join("..", "testdata", "claude-skills", "manual", "deploy"))
	if got := res.Messages[0].Content.(*mcp.TextContent).Text; !strings.HasSuffix(got, "Deploy version v2 to staging (from "+abs+").\n") {
		t.Errorf("deploy prompt text: %q", got)
	}
	if r := call(t, cs, "list_skills", map[string]any{}); r.IsError || strings.Contains(text(t, r), `"deploy"`) || !strings.Contains(text(t, r), `"argument_hint":"\u003ctopic\u003e"`) {
		t.Errorf("list_skills: %s", text(t, r))
	}
	if r := call(t, cs, "load_skill", map[string]any{"name": "deploy"}); !r.IsError || !strings.Contains(text(t, r), "is for users to invoke") {
		t.Errorf("load_skill deploy: %s", text(t, r))
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://pdf-tools/SKILL.md"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "Extract the text.") {
		t.Errorf("skill://pdf-tools/SKILL.md: %v %v", rr, err)
	}
}
