package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// The names of the skill-management tools as Devai's agents call them (see [WithDevaiNames]).
const (
	ToolDevaiCreate = "skill_create"
	ToolDevaiUpdate = "skill_update"
	ToolDevaiDelete = "skill_delete"
	ToolDevaiReload = "skill_reload"
	ToolDevaiList   = "skill_list"
)

// devaiToolNames are the names above.
var devaiToolNames = []string{ToolDevaiCreate, ToolDevaiUpdate, ToolDevaiDelete, ToolDevaiReload, ToolDevaiList}

// devaiCode is the file a Devai skill's code is: Devai's skills are TypeScript.
const devaiCode = "execute.ts"

// WithDevaiNames returns r offering the skill-management tools under the names and with the
// arguments of Devai's (skill_create, skill_update, skill_delete, skill_reload, skill_list) in
// place of create_skill, update_skill and delete_skill, for agent backends built on them. The
// runtime decides each call as it decides create_skill's.
//
// skill_<name> is also the tool name of a skill with id name: while r offers these names, the
// skills with ids create, update, delete, reload and list have no tool of their own (each face
// says so where it lists what it left out); run_skill still runs them.
func WithDevaiNames(r Runner) Runner { return devaiRunner{r} }

// Naming says by which names a face offers the skill-management tools: a face's option
// (serve --tool-names, mcp --tool-names), so that backends written for another system call them
// by the names they know.
type Naming string

const (
	// NamingSkillbox, the default: create_skill, update_skill, delete_skill.
	NamingSkillbox Naming = "skillbox"
	// NamingDevai: skill_create, skill_update, skill_delete, skill_reload, skill_list, with
	// Devai's arguments (see [WithDevaiNames]).
	NamingDevai Naming = "devai"
)

// ParseNaming reads a Naming by name; "" is NamingSkillbox.
func ParseNaming(s string) (Naming, error) {
	switch n := Naming(s); n {
	case "":
		return NamingSkillbox, nil
	case NamingSkillbox, NamingDevai:
		return n, nil
	}
	return "", fmt.Errorf("tool names %q: use %s or %s", s, NamingSkillbox, NamingDevai)
}

// Over returns r offering its toolset under n's names.
func (n Naming) Over(r Runner) Runner {
	if n == NamingDevai {
		return WithDevaiNames(r)
	}
	return r
}

// devaiRunner is a Runner whose toolset goes by Devai's names.
type devaiRunner struct{ Runner }

// base is r without the toolset's own wrappers that only rename (devaiRunner): what it can do.
func base(r Runner) Runner {
	if d, ok := r.(devaiRunner); ok {
		return d.Runner
	}
	return r
}

// devaiNames reports whether r's toolset goes by Devai's names, through any wrapper.
func devaiNames(r Runner) bool {
	for {
		switch x := r.(type) {
		case devaiRunner:
			return true
		case readOnlyRunner:
			r = x.Runner
		default:
			return false
		}
	}
}

// devaiTools are the skill-management tools under Devai's names, with its arguments: the
// authoring ones (create, update, delete) are offered to whom create_skill would be.
var devaiTools = []builtin{
	{
		name: ToolDevaiCreate,
		description: "Creates a new skill: a TypeScript execute.ts exporting execute(args, ctx) (ctx has fetch, env, readFile, writeFile, log), " +
			"checked and installed at once, live for the next call (no reload needed). Fails if the id exists. A skill written by an agent " +
			"gets at most what the operator allows agents' skills (often no network, env or secrets).",
		parameters: `{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The new skill's id: lower-case letters, digits and '-'"},` +
			`"name":{"type":"string","description":"A display name (the id when absent)"},` +
			`"description":{"type":"string","description":"What the skill does, for the model that will call it"},` +
			`"parameters":{"type":"object","description":"Its arguments: {\"name\": {\"type\": \"string\", \"description\": \"...\", \"required\": true}}"},` +
			`"code":{"type":"string","description":"The text of execute.ts"},` +
			`"tags":{"type":"array","items":{"type":"string"}}},` +
			`"required":["id","description","code"],"additionalProperties":false}`,
		do: doDevaiCreate,
	},
	{
		name:        ToolDevaiUpdate,
		description: "Changes a skill an agent wrote: the fields given replace its own, the rest stay. Runs in flight finish on the old version.",
		parameters: `{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The skill's id"},` +
			`"code":{"type":"string","description":"The new text of execute.ts"},` +
			`"description":{"type":"string"},` +
			`"parameters":{"type":"object","description":"The new arguments, as for skill_create"}},` +
			`"required":["id"],"additionalProperties":false}`,
		do: doDevaiUpdate,
	},
	{
		name:        ToolDevaiDelete,
		description: "Deletes a skill an agent wrote.",
		parameters:  `{"type":"object","properties":{"id":{"type":"string","description":"The skill's id"}},"required":["id"],"additionalProperties":false}`,
		do:          doDeleteSkill,
	},
	{
		name: ToolDevaiReload,
		description: "Answers the skills as they are now, as skill_list does. Skills written with skill_create, skill_update and skill_delete " +
			"are live at once: there is nothing to rescan (the operator's skill directories are rescanned by the operator).",
		parameters: `{"type":"object","properties":{},"additionalProperties":false}`,
		do:         doDevaiList,
	},
	{
		name:        ToolDevaiList,
		description: "Lists every skill with its status: active (it runs), or error with why it cannot run.",
		parameters:  `{"type":"object","properties":{},"additionalProperties":false}`,
		do:          doDevaiList,
	},
}

// isDevaiAuthoring reports whether name is one of Devai's tools that write skills.
func isDevaiAuthoring(name string) bool {
	return name == ToolDevaiCreate || name == ToolDevaiUpdate || name == ToolDevaiDelete
}

// devaiTool returns the Devai-named tool name, when r goes by those names.
func devaiTool(r Runner, name string) *builtin {
	if !devaiNames(r) {
		return nil
	}
	for i := range devaiTools {
		if devaiTools[i].name == name {
			return &devaiTools[i]
		}
	}
	return nil
}

// devaiManifest is skill.json as Devai's skill_create describes a skill.
type devaiManifest struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Runtime     spec.Language   `json:"runtime"`
	Tags        []string        `json:"tags,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

func doDevaiCreate(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "id", "name", "description", "parameters", "code", "tags")
	if perr != nil {
		return failed("", start, perr)
	}
	m := devaiManifest{ID: a.str("id", true), Name: a.str("name", false), Description: a.str("description", true),
		Runtime: spec.LangTypeScript, Tags: a.strings("tags"), Parameters: a.object("parameters")}
	code := a.str("code", true)
	if err := a.err(); err != nil {
		return failed(m.ID, start, err)
	}
	if m.Name == "" {
		m.Name = m.ID
	}
	raw, _ := json.Marshal(m)
	return installWritten(ctx, r, start, m.ID, raw, map[string]string{devaiCode: code}, runtime.InstallOptions{})
}

func doDevaiUpdate(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "id", "code", "description", "parameters")
	if perr != nil {
		return failed("", start, perr)
	}
	id, code, description := a.str("id", true), a.str("code", false), a.str("description", false)
	_, hasParams := a.m["parameters"]
	params := a.object("parameters")
	if err := a.err(); err != nil {
		return failed(id, start, err)
	}
	s, err := r.Skill(id)
	if err != nil {
		return failed(id, start, &run.Error{Kind: run.KindNotFound, Skill: id, Message: fmt.Sprintf("no skill %q: skill_create writes a new one", id), Err: err})
	}
	m := s.Manifest()
	if m.Runtime != spec.LangTypeScript && (m.Runtime != "" || s.Kind() != spec.Executable) {
		return failed(id, start, invalidArgs("skill %q is not a TypeScript skill (execute.ts), which skill_update writes: update_skill replaces any skill an agent wrote", id))
	}
	if code == "" {
		data, rerr := skillmd.ReadResource(s.Dir(), devaiCode, MaxModelText)
		if rerr != nil {
			return failed(id, start, &run.Error{Kind: run.KindInvalidArgs, Skill: id, Message: fmt.Sprintf("skill %q has no %s to keep: give its code", id, devaiCode), Err: rerr})
		}
		code = string(data)
	}
	if description != "" {
		m.Description = description
	}
	if hasParams {
		m.Parameters = params
	}
	m.Runtime = spec.LangTypeScript
	raw, err := json.Marshal(m)
	if err != nil {
		return failed(id, start, &run.Error{Kind: run.KindInternal, Skill: id, Message: "encode the manifest: " + err.Error(), Err: err})
	}
	return installWritten(ctx, r, start, id, raw, map[string]string{devaiCode: code}, runtime.InstallOptions{Replace: true, MustExist: true})
}

// DevaiSkill is one skill of skill_list's value.
type DevaiSkill struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Status is "active" (it runs) or "error" (Error says why it cannot).
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Tool is the skill's own tool, when it has one (see WithDevaiNames).
	Tool string `json:"tool,omitempty"`
}

// doDevaiList lists every skill of the catalog a model may be offered, broken ones too.
func doDevaiList(_ context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args)
	if perr != nil {
		return failed("", start, perr)
	}
	if err := a.err(); err != nil {
		return failed("", start, err)
	}
	out := []DevaiSkill{}
	for _, s := range r.Skills() {
		if s == nil || !s.ModelInvocable() {
			continue
		}
		d := DevaiSkill{ID: s.ID(), Name: s.Name(), Description: s.Description(), Status: "active"}
		if !s.Status().Usable() {
			d.Status, d.Error = "error", string(s.Status())
			if err := s.Err(); err != nil {
				d.Error = err.Error()
			}
		} else if s.Kind() == spec.Executable && !devaiClash(s.ID()) {
			d.Tool = tooldef.Name(s.ID())
		}
		out = append(out, d)
	}
	return succeeded("", start, map[string][]DevaiSkill{"skills": out}, "")
}

// devaiClash reports whether skill id's tool would have the name of one of Devai's tools.
func devaiClash(id string) bool {
	return slices.Contains(devaiToolNames, tooldef.Name(id))
}

// skillToolCatalog is the catalog of r whose skills get a tool each: without the skills whose
// tool names are the management tools' when r goes by Devai's names.
func skillToolCatalog(r Runner) catalog.Catalog[*runtime.Skill] {
	if !devaiNames(r) {
		return r
	}
	return devaiSkillTools{r}
}

type devaiSkillTools struct{ r Runner }

func (d devaiSkillTools) Skills() []*runtime.Skill {
	return slices.DeleteFunc(slices.Clone(d.r.Skills()), func(s *runtime.Skill) bool { return s != nil && devaiClash(s.ID()) })
}

// devaiLeftOut says which skills have no tool of their own under Devai's names.
func devaiLeftOut(r Runner) []tooldef.Breach {
	if !devaiNames(r) {
		return nil
	}
	var out []tooldef.Breach
	for _, s := range r.Skills() {
		if s != nil && s.Kind() == spec.Executable && devaiClash(s.ID()) {
			out = append(out, tooldef.Breach{Tool: tooldef.Name(s.ID()), Skill: s.ID(), Vendor: "skillbox", Rule: "devai-names",
				Problem: fmt.Sprintf("skill %q has no tool of its own: %s is the Devai management tool's name here; run it with run_skill", s.ID(), tooldef.Name(s.ID()))})
		}
	}
	return out
}
