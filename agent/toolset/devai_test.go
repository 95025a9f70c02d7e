package toolset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
)

// devaiRuntime is a runtime that lets agents write skills, over a directory holding a skill
// whose id is "list" (its tool would be skill_list) and a broken one.
func devaiRuntime(t *testing.T, authoring bool) *runtime.Runtime {
	t.Helper()
	dir := t.TempDir()
	for id, files := range map[string]map[string]string{
		"list":   {"skill.json": `{"id":"list","name":"List","description":"Lists a, b."}`, "execute.js": `export const execute = () => ["a", "b"]`},
		"broken": {"skill.json": `{"id":"broken","name":"Broken","description":"d","parameters":{"x":{"type":"nosuch"}}}`, "execute.js": `export const execute = () => 1`},
	} {
		for name, text := range files {
			if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, id, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := &policy.Policy{AgentSkills: policy.AgentSkills{Enabled: authoring}}
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Policy: p, Shared: testengine.Shared(t, runtime.SharedConfig{NoCache: true})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// Code written for Devai manages skills with its own tool names and arguments: skill_create
// (id, name, description, parameters, code, tags), skill_update (the fields given), skill_list
// (each skill's status), skill_reload and skill_delete; the new skill runs at once as its own
// tool. Skillbox's names for the same tools are not offered beside them.
func TestDevaiManagesSkillsByItsNames(t *testing.T) {
	ctx := context.Background()
	rt := devaiRuntime(t, true)
	r := WithDevaiNames(rt)
	var names []string
	for _, tool := range Tools(r) {
		names = append(names, tool.Name)
	}
	for _, want := range []string{ToolDevaiCreate, ToolDevaiUpdate, ToolDevaiDelete, ToolDevaiReload, ToolDevaiList, ToolRunSkill} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v: no %s", names, want)
		}
	}
	if slices.Contains(names, ToolCreateSkill) {
		t.Errorf("tools %v: create_skill beside skill_create", names)
	}
	if got, _ := Handle(ctx, r, ToolCreateSkill, []byte(createArgs)); !strings.Contains(got, "not_found") {
		t.Errorf("create_skill under Devai's names: %s", got)
	}

	create := `{"id":"greet","name":"Greet","description":"Greets someone.","tags":["demo"],
	  "parameters":{"who":{"type":"string","description":"Whom to greet","required":true}},
	  "code":"export async function execute(args: {who: string}, ctx: any) { return 'hello ' + args.who; }"}`
	got, err := Handle(ctx, r, ToolDevaiCreate, []byte(create))
	if err != nil {
		t.Fatalf("skill_create: %s", got)
	}
	if got, _ := Handle(ctx, r, "skill_greet", []byte(`{"who":"ada"}`)); got != `"hello ada"` {
		t.Fatalf("the new skill's run: %s", got)
	}
	if got, _ := Handle(ctx, r, "skill_greet", []byte(`{}`)); !strings.Contains(got, "invalid_args") {
		t.Errorf("its parameters are checked: %s", got)
	}
	if got, _ := Handle(ctx, r, ToolDevaiCreate, []byte(create)); !strings.Contains(got, "exists") {
		t.Errorf("a second skill_create of greet: %s", got)
	}
	// skill_update replaces what it is given and keeps the rest.
	if got, err := Handle(ctx, r, ToolDevaiUpdate, []byte(`{"id":"greet","code":"export const execute = (args: {who: string}) => 'hi ' + args.who"}`)); err != nil {
		t.Fatalf("skill_update code: %s", got)
	}
	if got, err := Handle(ctx, r, ToolDevaiUpdate, []byte(`{"id":"greet","description":"Says hi."}`)); err != nil {
		t.Fatalf("skill_update description: %s", got)
	}
	if got, _ := Handle(ctx, r, "skill_greet", []byte(`{"who":"ada"}`)); got != `"hi ada"` {
		t.Errorf("after the updates: %s", got)
	}
	if s, _ := rt.Skill("greet"); s == nil || s.Description() != "Says hi." || !slices.Contains(s.Manifest().Tags, "demo") {
		t.Errorf("the updated manifest: %+v", s)
	}
	if got, _ := Handle(ctx, r, ToolDevaiUpdate, []byte(`{"id":"nosuch","code":"x"}`)); !strings.Contains(got, `no skill "nosuch"`) {
		t.Errorf("skill_update of no skill: %s", got)
	}

	for _, tool := range []string{ToolDevaiList, ToolDevaiReload} {
		res, err := Call(ctx, r, tool, nil)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var l struct{ Skills []DevaiSkill }
		if err := json.Unmarshal(res.Result, &l); err != nil {
			t.Fatal(err)
		}
		status := map[string]DevaiSkill{}
		for _, s := range l.Skills {
			status[s.ID] = s
		}
		if g := status["greet"]; g.Status != "active" || g.Tool != "skill_greet" {
			t.Errorf("%s: greet %+v", tool, g)
		}
		if b := status["broken"]; b.Status != "error" || !strings.Contains(b.Error, "nosuch") {
			t.Errorf("%s: broken %+v", tool, b)
		}
		if l := status["list"]; l.Status != "active" || l.Tool != "" {
			t.Errorf("%s: the skill list has no tool of its own: %+v", tool, l)
		}
	}
	if got, err := Handle(ctx, r, ToolDevaiDelete, []byte(`{"id":"greet"}`)); err != nil {
		t.Fatalf("skill_delete: %s", got)
	}
	if _, err := rt.Skill("greet"); err == nil {
		t.Error("greet is still there after skill_delete")
	}
}

// Under Devai's names, skill_list is the management tool: the skill whose id is list has no
// tool of its own (each listing says so) and runs through run_skill; without them, skill_list
// is that skill's tool. A caller who may not author is offered only skill_list and skill_reload.
func TestDevaiNamesLeaveOutTheSkillsTheyShadow(t *testing.T) {
	ctx := context.Background()
	rt := devaiRuntime(t, true)
	r := WithDevaiNames(rt)
	count := func(tools []tooldef.OpenAITool, name string) int {
		n := 0
		for _, tl := range tools {
			if tl.Function.Name == name {
				n++
			}
		}
		return n
	}
	if n := count(OfferAll.OpenAI(r), ToolDevaiList); n != 1 {
		t.Errorf("skill_list listed %d times, want once (the management tool)", n)
	}
	l := OfferAll.List(r, tooldef.FormatOpenAI)
	if !slices.ContainsFunc(l.LeftOut, func(b tooldef.Breach) bool { return b.Skill == "list" && strings.Contains(b.Problem, "run_skill") }) {
		t.Errorf("left out %+v: not the skill list", l.LeftOut)
	}
	if got, _ := Handle(ctx, r, ToolRunSkill, []byte(`{"skill":"list"}`)); got != `["a","b"]` {
		t.Errorf("run_skill list: %s", got)
	}
	if got, _ := Handle(ctx, r, ToolDevaiList, nil); !strings.Contains(got, `"skills"`) {
		t.Errorf("skill_list under Devai's names: %s", got)
	}
	if got, _ := Handle(ctx, rt, ToolDevaiList, nil); got != `["a","b"]` {
		t.Errorf("skill_list without them (the skill's tool): %s", got)
	}
	if n := count(OfferAll.OpenAI(rt), ToolDevaiList); n != 1 {
		t.Errorf("without Devai's names, skill_list listed %d times", n)
	}
	var names []string
	for _, tool := range Tools(WithoutAuthoring(r)) {
		names = append(names, tool.Name)
	}
	if slices.Contains(names, ToolDevaiCreate) || slices.Contains(names, ToolDevaiDelete) || !slices.Contains(names, ToolDevaiList) || !slices.Contains(names, ToolDevaiReload) {
		t.Errorf("a caller who may not author is offered %v", names)
	}
	if got, _ := Handle(ctx, WithDevaiNames(devaiRuntime(t, false)), ToolDevaiCreate, []byte(`{"id":"x","description":"d","code":"export const execute = () => 1"}`)); !strings.Contains(got, "permission_denied") {
		t.Errorf("skill_create with authoring off: %s", got)
	}
}

func TestParseNaming(t *testing.T) {
	for in, want := range map[string]Naming{"": NamingSkillbox, "skillbox": NamingSkillbox, "devai": NamingDevai} {
		if got, err := ParseNaming(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseNaming("Devai"); err == nil || !strings.Contains(err.Error(), "use skillbox or devai") {
		t.Errorf("a wrong name: %v", err)
	}
}
