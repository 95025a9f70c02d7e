package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

func TestListSkills(t *testing.T) {
	rt, _ := disclosureRuntime(t)
	res, err := Call(context.Background(), rt, ToolListSkills, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.RunID != "" || res.Skill != "" {
		t.Errorf("result %+v", res)
	}
	var got SkillList
	if err := json.Unmarshal(res.Result, &got); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"skills":[
		{"id":"bad-md","name":"Bad md","description":"Has a broken SKILL.md","kind":"executable","tags":[],"tool":"skill_bad_md"},
		{"id":"echo","name":"Echo","description":"Echoes its arguments","kind":"executable","tags":["test"],"tool":"skill_echo"},
		{"id":"guide","name":"guide","description":"How to write letters.\nUse it for any letter.","kind":"instructions","tags":["writing","style"]},
		{"id":"plain","name":"Plain","description":"Takes a number","kind":"executable","tags":[],"tool":"skill_plain"}
	],"total":4}`)
	// An unsorted catalog is listed by id all the same; an empty one is [], not null.
	c := testCatalog{exe("b", "B", "b"), exe("a", "A", "a")}
	if l := ListSkills(c); l[0].ID != "a" || l[1].ID != "b" {
		t.Errorf("order %v", l)
	}
	if b, _ := json.Marshal(listSkills(testCatalog{}, "", 0)); string(b) != `{"skills":[],"total":0}` {
		t.Errorf("empty: %s", b)
	}
}

// list_skills with a query lists the best matches first, with a limit at most that many; total
// is every usable skill either way, so a model knows what it is not shown.
func TestListSkillsQueryAndLimit(t *testing.T) {
	rt, _ := disclosureRuntime(t)
	list := func(args string) (SkillList, error) {
		res, err := Call(context.Background(), rt, ToolListSkills, []byte(args))
		var l SkillList
		if err == nil {
			if jerr := json.Unmarshal(res.Result, &l); jerr != nil {
				t.Fatal(jerr)
			}
		}
		return l, err
	}
	ids := func(l SkillList) (out []string) {
		for _, s := range l.Skills {
			out = append(out, s.ID)
		}
		return out
	}
	if l, err := list(`{"query":"letters"}`); err != nil || !slices.Equal(ids(l), []string{"guide"}) || l.Total != 4 {
		t.Errorf("query letters: %v %v", ids(l), err)
	}
	if l, err := list(`{"query":"echoes arguments","limit":1}`); err != nil || !slices.Equal(ids(l), []string{"echo"}) {
		t.Errorf("query with limit: %v %v", ids(l), err)
	}
	if l, err := list(`{"limit":2}`); err != nil || !slices.Equal(ids(l), []string{"bad-md", "echo"}) || l.Total != 4 {
		t.Errorf("limit 2: %v %v", ids(l), err)
	}
	if l, err := list(`{"query":null,"limit":null}`); err != nil || len(l.Skills) != 4 {
		t.Errorf("nulls are omitted arguments: %v %v", ids(l), err)
	}
	if l, err := list(`{"query":"zzzz"}`); err != nil || len(l.Skills) != 0 || l.Total != 4 {
		t.Errorf("no match: %+v %v", l, err)
	}
	for args, want := range map[string]string{
		`{"limit":0}`:    `argument "limit": must be from 1 to 1000, not 0`,
		`{"limit":1.5}`:  `argument "limit": must be a whole number, not 1.5`,
		`{"limit":"3"}`:  `argument "limit": must be an integer, not a string`,
		`{"query":3}`:    `argument "query": must be a string, not a number`,
		`{"limit":5000}`: `argument "limit": must be from 1 to 1000, not 5000`,
	} {
		if _, err := list(args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

func TestHandle(t *testing.T) {
	rt, dir := disclosureRuntime(t)
	abs, _ := filepath.Abs(filepath.Join(dir, "echo"))
	guideDir, _ := filepath.Abs(filepath.Join(dir, "guide"))
	tests := []struct {
		name, tool, args string
		want             string // the whole text, or with a trailing "…" its start
		wantErr          error
	}{
		{"run by tool name", "skill_echo", `{"text":"a b"}`, `{"text":"a b","top":5}`, nil},
		{"run_skill", ToolRunSkill, `{"skill":"echo","args":{"text":"x","top":1}}`, `{"text":"x","top":1}`, nil},
		{"run_skill by tool name", ToolRunSkill, `{"skill":"skill_echo","args":{"text":"x"}}`, `{"text":"x","top":5}`, nil},
		{"run_skill by metadata name", ToolRunSkill, `{"skill":"Plain","args":{"n":1}}`, `{"n":1}`, nil},
		{"run_skill without args", ToolRunSkill, `{"skill":"plain"}`, `error: invalid_args: arguments: missing property 'n'`, run.ErrInvalidArgs},
		{"invalid args of a skill", "skill_echo", `{"text":1}`, `error: invalid_args: argument "text": …`, run.ErrInvalidArgs},
		{"run an instruction skill", ToolRunSkill, `{"skill":"guide"}`, `error: not_found: skill "guide" has instructions only…`, run.ErrNotFound},
		{"run a broken skill", ToolRunSkill, `{"skill":"broken"}`, `error: not_found: skill "broken" is broken and cannot be used…`, run.ErrNotFound},
		{"run_skill args not an object", ToolRunSkill, `{"skill":"echo","args":"text"}`, `error: invalid_args: argument "args": must be a JSON object, not a string`, run.ErrInvalidArgs},
		{"run_skill no skill", ToolRunSkill, `{}`, `error: invalid_args: argument "skill": is required`, run.ErrInvalidArgs},
		{"run_skill unknown skill", ToolRunSkill, `{"skill":"nope"}`, `error: not_found: no skill "nope"; list_skills gives the ids of the skills there are`, run.ErrNotFound},

		{"load with arguments", ToolLoadSkill, `{"name":"echo","arguments":"hi there"}`,
			"Base directory for this skill: " + abs + "\n\n# Echo\n\nSay: hi there\n\nSee reference/api.md.\n\n---\nFiles of this skill, for read_skill_resource: data.bin, reference/api.md", nil},
		{"load by tool name", ToolLoadSkill, `{"name":"skill_echo"}`, "Base directory for this skill: " + abs + "\n\n# Echo\n\nSay: \n…", nil},
		{"load instructions, arguments appended", ToolLoadSkill, `{"name":"guide","arguments":"to Ada"}`,
			"Base directory for this skill: " + guideDir + "\n\n# Letters\n\nStart with the date. Templates are in templates/letter.md.\n\n\nARGUMENTS: to Ada\n\n---\nFiles of this skill, for read_skill_resource: templates/letter.md", nil},
		{"load a program", ToolLoadSkill, `{"name":"plain"}`,
			"# Plain (plain)\n\nTakes a number\n\nThis skill is a program. Run it with the tool skill_plain, or with run_skill {\"skill\": \"plain\", \"args\": {...}}. Its arguments, as a JSON Schema:\n\n```json\n" +
				`{"additionalProperties":false,"properties":{"n":{"type":"integer"}},"required":["n"],"type":"object"}` + "\n```", nil},
		{"load a program with a broken SKILL.md", ToolLoadSkill, `{"name":"bad-md"}`, "# Bad md (bad-md)\n\nHas a broken SKILL.md\n\nThis skill is a program.…", nil},
		{"load a broken instruction skill", ToolLoadSkill, `{"name":"broken-guide"}`, `error: not_found: skill "broken-guide" is broken…`, run.ErrNotFound},
		{"load nothing", ToolLoadSkill, `{"name":"  "}`, `error: invalid_args: argument "name": is empty`, run.ErrInvalidArgs},
		{"load with a typo", ToolLoadSkill, `{"nam":"echo","arguments":3}`,
			`error: invalid_args: argument "nam": is not an argument of this tool (its arguments: name, arguments); argument "name": is required; argument "arguments": must be a string, not a number`, run.ErrInvalidArgs},
		{"load with arguments not an object", ToolLoadSkill, `["echo"]`, `error: invalid_args: arguments must be a JSON object: got an array`, run.ErrInvalidArgs},
		{"load with bad JSON", ToolLoadSkill, `{"name":`, `error: invalid_args: arguments must be a JSON object: unexpected EOF`, run.ErrInvalidArgs},
		{"load with two objects", ToolLoadSkill, `{"name":"echo"} {}`, `error: invalid_args: arguments must be one JSON object, with nothing after it`, run.ErrInvalidArgs},

		{"read", ToolReadSkillResource, `{"skill":"echo","resource":"reference/api.md"}`, "# API\n\nCall it.\n", nil},
		{"read SKILL.md", ToolReadSkillResource, `{"skill":"guide","resource":"SKILL.md"}`, guideSkillMD, nil},
		{"read ./ path", ToolReadSkillResource, `{"skill":"guide","resource":"./templates//letter.md"}`, "Dear $NAME,\n", nil},
		{"read ..", ToolReadSkillResource, `{"skill":"echo","resource":"../guide/SKILL.md"}`, `error: invalid_args: resource "../guide/SKILL.md": the path contains ".."`, run.ErrInvalidArgs},
		{"read absolute", ToolReadSkillResource, `{"skill":"echo","resource":"/etc/passwd"}`, `error: invalid_args: resource "/etc/passwd": the path is absolute…`, run.ErrInvalidArgs},
		{"read hidden", ToolReadSkillResource, `{"skill":"echo","resource":".env"}`, `error: permission_denied: resource ".env": hidden files are not part of a skill`, run.ErrPermissionDenied},
		{"read a symlink out", ToolReadSkillResource, `{"skill":"echo","resource":"outside.md"}`, `error: permission_denied: resource "outside.md": leads outside the skill's directory`, run.ErrPermissionDenied},
		{"read missing", ToolReadSkillResource, `{"skill":"echo","resource":"nope.md"}`, `error: not_found: resource "nope.md": no such file`, run.ErrNotFound},
		{"read a directory", ToolReadSkillResource, `{"skill":"echo","resource":"reference"}`, `error: invalid_args: resource "reference": is a directory, not a file`, run.ErrInvalidArgs},
		{"read binary", ToolReadSkillResource, `{"skill":"echo","resource":"data.bin"}`, `error: invalid_args: resource "data.bin" is not text (10 bytes of binary data)…`, run.ErrInvalidArgs},
		{"read without resource", ToolReadSkillResource, `{"skill":"echo"}`, `error: invalid_args: argument "resource": is required`, run.ErrInvalidArgs},

		{"list with arguments", ToolListSkills, `{"all":true}`, `error: invalid_args: argument "all": is not an argument of this tool (its arguments: query, limit)`, run.ErrInvalidArgs},
		{"list with null", ToolListSkills, `null`, `{"skills":[{"id":"bad-md",…`, nil},

		{"unknown tool", "skill_nope", `{}`, `error: not_found: unknown tool "skill_nope"; the tools are list_skills, load_skill, read_skill_resource, run_skill, run_skill_script, skill_bad_md, skill_echo, skill_plain`, ErrUnknownTool},
		{"id instead of tool", "echo", `{}`, `error: not_found: unknown tool "echo" (did you mean skill_echo?); the tools are …`, ErrUnknownTool},
		{"dash kept", "skill_bad-md", `{}`, `error: not_found: unknown tool "skill_bad-md" (did you mean skill_bad_md?)…`, ErrUnknownTool},
		{"instruction skill as a tool", "skill_guide", `{}`, `error: not_found: skill "guide" has instructions only (a SKILL.md, no code): it is read, not run; read it with skillbox instructions guide, or a model with load_skill`, run.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Handle(context.Background(), rt, tc.tool, []byte(tc.args))
			if prefix, ok := strings.CutSuffix(tc.want, "…"); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("got\n%s\nwant it to start with\n%s", got, prefix)
				}
			} else if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			switch {
			case tc.wantErr == nil && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("error %v, want one matching %v", err, tc.wantErr)
			}
			if strings.Contains(got, dir) && tc.tool != ToolLoadSkill {
				t.Errorf("a host path reached the model: %s", got)
			}
		})
	}
}

// TestCall: the Result of every kind of call, and that Call and Handle agree.
func TestCall(t *testing.T) {
	rt, _ := disclosureRuntime(t)
	ctx := context.Background()

	res, err := Call(ctx, rt, "skill_echo", []byte(`{"text":"hi"}`))
	if err != nil || !res.Success || res.Skill != "echo" || !strings.HasPrefix(res.RunID, "run_") {
		t.Fatalf("run: %+v, %v", res, err)
	}

	res, err = Call(ctx, rt, ToolLoadSkill, []byte(`{"name":"plain"}`))
	if err != nil || res.Skill != "plain" || res.RunID != "" {
		t.Fatalf("load: %+v, %v", res, err)
	}
	var l LoadedSkill
	if err := json.Unmarshal(res.Result, &l); err != nil {
		t.Fatal(err)
	}
	if l.Kind != spec.Executable || l.Tool != "skill_plain" || !strings.Contains(string(l.Parameters), `"n"`) || len(l.Resources) != 0 || l.Resources == nil {
		t.Errorf("loaded %+v", l)
	}

	res, err = Call(ctx, rt, ToolReadSkillResource, []byte(`{"skill":"echo","resource":"reference/api.md"}`))
	var r Resource
	if err != nil || json.Unmarshal(res.Result, &r) != nil || r != (Resource{Skill: "echo", Resource: "reference/api.md", Content: "# API\n\nCall it.\n"}) {
		t.Errorf("read: %+v %v", r, err)
	}

	res, err = Call(ctx, rt, "nope", nil)
	var ute *UnknownToolError
	if !errors.As(err, &ute) || !errors.Is(err, run.ErrNotFound) || ute.Name != "nope" || res.Success || res.Error.Kind != run.KindNotFound || res.Result != nil {
		t.Errorf("unknown: %+v, %v", res, err)
	}
	if len(ute.Valid) != len(Names())+3 || ute.Suggestion != "" {
		t.Errorf("valid %v, suggestion %q", ute.Valid, ute.Suggestion)
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	for _, tc := range []struct {
		ctx  context.Context
		tool string
		want error
	}{
		{canceled, ToolListSkills, run.ErrCanceled},
		{canceled, "skill_echo", run.ErrCanceled},
		{expired, ToolLoadSkill, run.ErrTimeout},
		{expired, "skill_echo", run.ErrTimeout},
	} {
		res, err = Call(tc.ctx, rt, tc.tool, []byte(`{"text":"x"}`))
		if !errors.Is(err, tc.want) || res.Error == nil || string(res.Error.Kind) != tc.want.Error() {
			t.Errorf("%s: %+v, %v", tc.tool, res, err)
		}
	}
}

// fakeRunner is a Runner over a catalog that runs nothing, for lookups without files.

// TestLookup: how run_skill, load_skill and read_skill_resource find the skill a model named.
func TestLookup(t *testing.T) {
	r := fakeRunner{Catalog: testCatalog{exe("twin-a", "Twin", "a"), exe("twin-b", "Twin", "b"), exe("word-count", "Word count", "c")}}
	tests := []struct{ name, want string }{
		{"word-count", `{"x":1}`},
		{"skill_word_count", `{"x":1}`},
		{"Word count", `{"x":1}`},
		{"word count", `error: not_found: no skill "word count"; list_skills gives the ids of the skills there are`},
		{"Twin", `error: not_found: several skills are named "Twin" (twin-a, twin-b, ...); give the id`},
		{"twin-b", `{"x":1}`},
	}
	for _, tc := range tests {
		args, _ := json.Marshal(map[string]any{"skill": tc.name, "args": map[string]int{"x": 1}})
		if got, _ := Handle(context.Background(), r, ToolRunSkill, args); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestUnknownToolListsBriefly: a large catalog is not listed whole in the error.
func TestUnknownToolListsBriefly(t *testing.T) {
	c := benchCatalog(50)
	e := unknownTool(c, "x")
	if len(e.Valid) != 50+len(Names()) {
		t.Fatalf("%d valid", len(e.Valid))
	}
	msg := e.Error()
	if !strings.HasSuffix(msg, fmt.Sprintf(" and %d more (list_skills lists every skill)", 50+len(Names())-maxListedTools)) || strings.Count(msg, ", ") != maxListedTools-1 {
		t.Errorf("%s", msg)
	}
}

func TestToolsetShapes(t *testing.T) {
	rt, _ := disclosureRuntime(t)
	ts := Tools(rt)
	names := []string{}
	for _, tool := range ts {
		names = append(names, tool.Name)
		if !json.Valid(tool.Parameters) {
			t.Errorf("%s: schema is not JSON", tool.Name)
		}
	}
	if strings.Join(names, ",") != strings.Join(Names(), ",") || len(names) != 5 {
		t.Errorf("names %v", names)
	}
	// Every name is a valid tool name for every provider, and none is a skill's.
	for _, n := range names {
		if _, isSkill := tooldef.SkillID(n); isSkill || strings.ContainsAny(n, "-: ") || len(n) > tooldef.MaxOpenAIToolName {
			t.Errorf("bad tool name %q", n)
		}
	}

	desc := func(i int) string { b, _ := json.Marshal(ts[i].Description); return string(b) }
	sameJSON(t, tooldef.OpenAIToolset(ts)[0], `{"type":"function","function":{"name":"list_skills","description":`+desc(0)+`,
		"parameters":{"type":"object","properties":{
			"query":{"type":"string","description":"Optional words describing the task, such as 'convert pdf to text': only the best matching skills are listed"},
			"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Optional: list at most this many (10 with a query unless given)"}},
			"additionalProperties":false},"strict":false}}`)
	sameJSON(t, tooldef.AnthropicToolset(ts)[2], `{"name":"read_skill_resource","description":`+desc(2)+`,
		"input_schema":{"type":"object","properties":{"skill":{"type":"string","description":"The skill's id"},
		"resource":{"type":"string","description":"The file's path relative to the skill's directory, such as reference/api.md"}},
		"required":["skill","resource"],"additionalProperties":false}}`)
	strict := map[string]bool{}
	for _, o := range tooldef.OpenAIToolset(ts) {
		strict[o.Function.Name] = o.Function.Strict
	}
	// Optional arguments (list_skills' query and limit, load_skill's "arguments", run_skill's
	// free-form "args") rule strict out.
	if strict[ToolListSkills] || strict[ToolLoadSkill] || !strict[ToolReadSkillResource] || strict[ToolRunSkill] {
		t.Errorf("strict %v", strict)
	}

	// A handler is Handle under the tool's name.
	got, err := ts[0].Handler(context.Background(), nil)
	want, _ := Handle(context.Background(), rt, ToolListSkills, nil)
	if err != nil || got != want {
		t.Errorf("handler: %q, %v", got, err)
	}

	// The converters copy the schemas.
	o := tooldef.OpenAIToolset(ts)
	o[0].Function.Parameters[0] = ' '
	if !json.Valid(Tools(rt)[0].Parameters) || !json.Valid(ts[0].Parameters) {
		t.Error("a converted schema shares memory with the toolset")
	}
}

func TestResultText(t *testing.T) {
	tests := []struct {
		res  *run.Result
		want string
	}{
		{nil, "error: internal: no result"},
		{&run.Result{Success: true}, "null"},
		{&run.Result{Success: true, Result: json.RawMessage(`{"a":1}`)}, `{"a":1}`},
		{&run.Result{Error: &run.ResultError{Kind: run.KindTimeout, Message: "too slow"}}, "error: timeout: too slow"},
		{&run.Result{}, "error: internal: the call failed without an error"},
	}
	for _, tc := range tests {
		if got := ResultText(tc.res); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
