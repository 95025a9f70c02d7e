package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/prompt"
	"github.com/skillbox-dev/skillbox/agent/runmodule"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// invocationRuntime scans ../testdata/claude-skills/manual (deploy: disable-model-invocation and
// an argument-hint; helper: an argument-hint) and two executable skills beside it: ship, whose
// SKILL.md disables model invocation, and echo.
func invocationRuntime(t *testing.T) *runtime.Runtime {
	t.Helper()
	dir := t.TempDir()
	fixture(t, dir, "ship", map[string]string{
		"skill.json": `{"id":"ship","name":"Ship","description":"Ships a release"}`,
		"SKILL.md":   "---\nname: ship\ndescription: Ships a release.\ndisable-model-invocation: true\n---\nShip $0.\n",
	}, true)
	fixture(t, dir, "echo", map[string]string{"skill.json": `{"id":"echo","name":"Echo","description":"Echoes"}`}, true)
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{filepath.Join("..", "..", "testdata", "claude-skills", "manual"), dir}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// TestModelInvocationDisabled: a skill whose SKILL.md sets disable-model-invocation is not
// offered to a model (list_skills, with or without a query, the system prompts, the tools of
// every vendor), and a model's load_skill, run_skill, skill_<id> or RUN_MODULE of it is refused
// with an error that says why. (The user's surface, the MCP prompt, is tested in mcpserver.)
func TestModelInvocationDisabled(t *testing.T) {
	rt := invocationRuntime(t)
	ctx := context.Background()
	var ids []string
	for _, s := range toolset.ListSkills(rt) {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, " "); got != "echo helper" {
		t.Errorf("ListSkills: %s", got)
	}
	for name, text := range map[string]string{"SystemPrompt": prompt.System(rt), "SystemPromptRunModule": prompt.RunModule(rt)} {
		if strings.Contains(text, "- deploy:") || strings.Contains(text, "- ship:") || !strings.Contains(text, "- helper:") {
			t.Errorf("%s offers a skill for users:\n%s", name, text)
		}
	}
	tools, _ := json.Marshal([]any{tooldef.OpenAI(rt), tooldef.Anthropic(rt), tooldef.MCP(rt), tooldef.WellKnown(rt, "")})
	if strings.Contains(string(tools), "skill_ship") || !strings.Contains(string(tools), "skill_echo") {
		t.Errorf("tools: %s", tools)
	}
	if out, _ := toolset.Handle(ctx, rt, toolset.ToolListSkills, []byte(`{"query":"deploys production"}`)); strings.Contains(out, `"deploy"`) {
		t.Errorf("list_skills with a query: %s", out)
	}
	const refused = `error: permission_denied: skill %q is for users to invoke: its SKILL.md sets disable-model-invocation, so a model may not load or run it`
	for _, c := range []struct{ tool, args, skill string }{
		{toolset.ToolLoadSkill, `{"name":"deploy"}`, "deploy"},
		{toolset.ToolLoadSkill, `{"name":"ship"}`, "ship"},
		{toolset.ToolRunSkill, `{"skill":"ship","args":{}}`, "ship"},
		{tooldef.Name("ship"), `{}`, "ship"},
	} {
		out, err := toolset.Handle(ctx, rt, c.tool, []byte(c.args))
		if !errors.Is(err, run.ErrPermissionDenied) || !strings.HasPrefix(out, strings.Replace(refused, "%q", `"`+c.skill+`"`, 1)) {
			t.Errorf("%s %s: %q %v", c.tool, c.args, out, err)
		}
	}
	for _, m := range runmodule.Run(ctx, rt, "[RUN_MODULE]\n{\"name\": \"ship\", \"args\": {}}\n[/RUN_MODULE]") {
		if !errors.Is(m.Err, run.ErrPermissionDenied) {
			t.Errorf("RUN_MODULE ship: %v", m.Err)
		}
	}
	// The rest still works: the program runs, its files and the other skills load.
	if _, err := toolset.Handle(ctx, rt, tooldef.Name("echo"), []byte(`{}`)); err != nil {
		t.Errorf("echo: %v", err)
	}
	if _, err := rt.Run(ctx, run.Request{Skill: "ship", Face: run.FaceCLI, Who: access.Local("test")}); err != nil {
		t.Errorf("a user's run of ship: %v", err)
	}
}

// TestArgumentHint: list_skills and load_skill show a skill's argument-hint, and load_skill
// renders the arguments as Claude Code does.
func TestArgumentHint(t *testing.T) {
	rt := invocationRuntime(t)
	for _, s := range toolset.ListSkills(rt) {
		if s.ID == "helper" && s.ArgumentHint != "<topic>" {
			t.Errorf("list_skills: %+v", s)
		}
	}
	res, err := toolset.Call(context.Background(), rt, toolset.ToolLoadSkill, []byte(`{"name":"helper","arguments":"rollbacks"}`))
	if err != nil {
		t.Fatal(err)
	}
	var l toolset.LoadedSkill
	if err := json.Unmarshal(res.Result, &l); err != nil {
		t.Fatal(err)
	}
	if l.ArgumentHint != "<topic>" || !strings.HasSuffix(l.Content, "\n\nHelp with rollbacks.\n") {
		t.Errorf("load_skill: %+v", l)
	}
}

// list_skills and load_skill carry a SKILL.md's allowed-tools as written.
func TestAllowedTools(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "pdf", map[string]string{"SKILL.md": "---\nname: pdf\ndescription: Works with PDFs.\nallowed-tools:\n  - Read\n  - Bash(python3:*)\n---\nRead it.\n"}, false)
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	want := "[Read Bash(python3:*)]"
	if l := toolset.ListSkills(rt); len(l) != 1 || fmt.Sprint(l[0].AllowedTools) != want {
		t.Errorf("list_skills: %+v", l)
	}
	res, err := toolset.Call(context.Background(), rt, toolset.ToolLoadSkill, []byte(`{"name":"pdf"}`))
	if err != nil {
		t.Fatal(err)
	}
	var l toolset.LoadedSkill
	if err := json.Unmarshal(res.Result, &l); err != nil || fmt.Sprint(l.AllowedTools) != want {
		t.Errorf("load_skill: %s %v", res.Result, err)
	}
}
