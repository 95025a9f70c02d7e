package toolset

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

func authorRuntime(t *testing.T, enabled bool) *runtime.Runtime {
	t.Helper()
	p := &policy.Policy{Network: []string{"api.example.com"}, AgentSkills: policy.AgentSkills{Enabled: enabled}}
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{t.TempDir()}, Policy: p, Shared: testengine.Shared(t, runtime.SharedConfig{NoCache: true})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

const createArgs = `{"id":"adder","manifest":{"id":"adder","name":"Adder","description":"Adds two numbers.",
  "parameters":{"a":{"type":"number","required":true},"b":{"type":"number","required":true}}},
  "files":{"execute.ts":"import { add } from './math'; export function execute(args: {a: number, b: number}) { return add(args.a, args.b); }",
           "math.ts":"export const add = (x: number, y: number): number => x + y;"}}`

// An agent writes a skill with create_skill and runs it at once; the tools exist only where the
// policy lets agents write skills, and a caller without the author role cannot use them.
func TestAuthorTools(t *testing.T) {
	ctx := context.Background()
	names := func(r Runner) []string {
		var out []string
		for _, tool := range Tools(r) {
			out = append(out, tool.Name)
		}
		return out
	}
	if got := names(authorRuntime(t, false)); slices.Contains(got, ToolCreateSkill) {
		t.Fatalf("authoring off, yet offered: %v", got)
	}
	off, _ := Handle(ctx, authorRuntime(t, false), ToolCreateSkill, []byte(createArgs))
	if !strings.Contains(off, "permission_denied") || !strings.Contains(off, "agentSkills: {enabled: true}") {
		t.Fatalf("create while off: %s", off)
	}

	rt := authorRuntime(t, true)
	if got := names(rt); !slices.Contains(got, ToolCreateSkill) || !slices.Contains(got, ToolDeleteSkill) {
		t.Fatalf("authoring on, not offered: %v", got)
	}
	if got, _ := Handle(WithOrigin(ctx, Origin{Face: run.FaceHTTP, Who: access.Principal{Key: "ci", Role: access.RoleRunner}}), rt, ToolCreateSkill, []byte(createArgs)); !strings.Contains(got, "needs the author role") {
		t.Fatalf("a caller without the author role: %s", got)
	}
	res, err := Call(WithOrigin(ctx, Origin{Face: run.FaceMCP, Who: access.Principal{Key: "claude", Role: access.RoleAuthor}}), rt, ToolCreateSkill, []byte(createArgs))
	if err != nil {
		t.Fatal(err)
	}
	var w WrittenSkill
	if err := json.Unmarshal(res.Result, &w); err != nil || w.ID != "adder" || w.Tool != "skill_adder" || w.Summary.Language != spec.LangTypeScript {
		t.Fatalf("%s %v", res.Result, err)
	}
	if got, _ := Handle(ctx, rt, "skill_adder", []byte(`{"a":2,"b":40}`)); got != "42" {
		t.Fatalf("the new skill's run: %s", got)
	}
	for args, want := range map[string]string{
		createArgs: `exists: update_skill replaces`,
		`{"id":"net","manifest":{"id":"net","name":"Net","description":"d","permissions":{"network":["api.example.com"]}},"files":{"execute.js":"export const execute = () => 1"}}`: "network api.example.com",
		`{"id":"bad","manifest":{"id":"bad","name":"Bad","description":"d"},"files":{"execute.js":"export const execute = ( => 1"}}`:                                                "execute.js:1:",
		`{"id":"x","manifest":{},"files":"nope"}`: `argument "files": must be an object`,
	} {
		if got, _ := Handle(ctx, rt, ToolCreateSkill, []byte(args)); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, want) {
			t.Errorf("create %.40s: got %s, want %q", args, got, want)
		}
	}
	update := strings.Replace(createArgs, "add(args.a, args.b)", "add(args.a, args.b) * 10", 1)
	if got, _ := Handle(ctx, rt, ToolUpdateSkill, []byte(update)); strings.HasPrefix(got, "error") {
		t.Fatalf("update: %s", got)
	}
	if got, _ := Handle(ctx, rt, "skill_adder", []byte(`{"a":2,"b":40}`)); got != "420" {
		t.Fatalf("after update: %s", got)
	}
	if got, _ := Handle(ctx, rt, ToolDeleteSkill, []byte(`{"id":"adder"}`)); strings.HasPrefix(got, "error") {
		t.Fatalf("delete: %s", got)
	}
	if got, _ := Handle(ctx, rt, "skill_adder", []byte(`{}`)); !strings.Contains(got, "unknown tool") {
		t.Fatalf("after delete: %s", got)
	}
}
