// Package toolset is the progressive-disclosure toolset and the dispatch of a model's tool calls.
// Its tools (list_skills, load_skill, read_skill_resource, run_skill, run_skill_script; see
// [Tools]) let a
// model see every skill by metadata only and pull a skill's instructions and files in when a task
// needs them; [Call] and [Handle] route any tool call, a skill's skill_<id> included, to the
// toolset or the runtime, and [Offer] is the choice of tools a face makes from its options.
//
// The vendor shapes of the tools are package tooldef's; this package adds what a call does.
package toolset

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/run"
)

// The names of the progressive-disclosure tools. None contains "skill_" at
// its start or a '-', so none can clash with a skill's tool name or id.
const (
	ToolListSkills        = "list_skills"
	ToolLoadSkill         = "load_skill"
	ToolReadSkillResource = "read_skill_resource"
	ToolRunSkill          = "run_skill"
	ToolRunSkillScript    = "run_skill_script"
)

// Tools returns the progressive-disclosure tools over r, in this order:
//
//   - list_skills: every usable skill's id, name, description, kind and tags, nothing more;
//   - load_skill(name, arguments?): a skill's instructions (its SKILL.md, rendered with
//     [skillmd.Render]), or for a program without SKILL.md its description and argument schema;
//   - read_skill_resource(skill, resource): another file of the skill, by relative path;
//   - run_skill(skill, args): runs an executable skill;
//   - run_skill_script(skill, script, args, stdin?): runs a program of a skill's scripts/
//     directory (as its SKILL.md names it) in the sandbox, and returns its exit code, stdout and
//     stderr;
//   - create_skill, update_skill, delete_skill: write skills, when the runtime's policy lets
//     agents write them (see [Author]).
//
// The point is the model's context: a system prompt ([prompt.System]) lists skills by metadata
// only, and the model pulls instructions and files in when a task needs them, instead of every
// SKILL.md being in every request. run_skill reaches every executable skill through one tool,
// so a catalog too large to send as skill_<id> tools (or an id too long for OpenAI) still runs.
func Tools(r Runner) []tooldef.Tool {
	all := builtins
	switch {
	case devaiNames(r):
		all = slices.Clone(builtins)
		for _, b := range devaiTools {
			if authoring(r) || !isDevaiAuthoring(b.name) {
				all = append(all, b)
			}
		}
	case authoring(r):
		all = append(slices.Clone(builtins), authorTools...)
	}
	out := make([]tooldef.Tool, len(all))
	for i, b := range all {
		name := b.name
		out[i] = tooldef.Tool{
			Name:        name,
			Description: b.description,
			Parameters:  json.RawMessage(b.parameters),
			Handler: func(ctx context.Context, argsJSON []byte) (string, error) {
				return Handle(ctx, r, name, argsJSON)
			},
			// Only the runs can reach outside the host (through a skill's grant); the others
			// read the catalog, or write skills.
			ReadOnly:  b.readOnly(),
			OpenWorld: name == ToolRunSkill || name == ToolRunSkillScript,
		}
	}
	return out
}

// Names returns the names of the toolset's tools ([Tools]), in its order.
func Names() []string {
	out := make([]string, len(builtins))
	for i, b := range builtins {
		out[i] = b.name
	}
	return out
}

// builtin is one tool of the toolset: its definition and what it does.
type builtin struct {
	name, description, parameters string
	do                            func(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error)
}

// builtins is the toolset. Descriptions are written for the model: what the tool returns and
// when to call it.
var builtins = []builtin{
	{
		name: ToolListSkills,
		description: "Lists the available skills: id, name, description, kind and tags of each, nothing more. " +
			`Kind "executable" skills are programs you run; kind "instructions" skills are guides you load and follow. ` +
			"With a query, lists the skills that match it best first; total says how many there are in all.",
		parameters: `{"type":"object","properties":{` +
			`"query":{"type":"string","description":"Optional words describing the task, such as 'convert pdf to text': only the best matching skills are listed"},` +
			`"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Optional: list at most this many (10 with a query unless given)"}},` +
			`"additionalProperties":false}`,
		do: doListSkills,
	},
	{
		name: ToolLoadSkill,
		description: "Loads a skill's full instructions (its SKILL.md). Call it before following a skill, " +
			"and before running a skill whose arguments you are unsure of.",
		parameters: `{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The skill's id, as list_skills gives it"},` +
			`"arguments":{"type":"string","description":"Optional text the instructions take as $ARGUMENTS (and word by word as $0, $1, ...), such as what the user asked for; list_skills gives a skill's argument_hint"}},` +
			`"required":["name"],"additionalProperties":false}`,
		do: doLoadSkill,
	},
	{
		name: ToolReadSkillResource,
		description: "Reads another file of a skill (a reference, a template, an example) by its path relative to the skill's " +
			"directory, as the skill's instructions name it. Read only what the task needs.",
		parameters: `{"type":"object","properties":{` +
			`"skill":{"type":"string","description":"The skill's id"},` +
			`"resource":{"type":"string","description":"The file's path relative to the skill's directory, such as reference/api.md"}},` +
			`"required":["skill","resource"],"additionalProperties":false}`,
		do: doReadResource,
	},
	{
		name: ToolRunSkill,
		description: "Runs an executable skill in a sandbox and returns its result as JSON. The arguments are checked " +
			"against the skill's schema (load_skill shows it); an error names the argument that is wrong.",
		parameters: `{"type":"object","properties":{` +
			`"skill":{"type":"string","description":"The skill's id"},` +
			`"args":{"type":"object","description":"The skill's arguments, a JSON object"}},` +
			`"required":["skill"],"additionalProperties":false}`,
		do: doRunSkill,
	},
	{
		name: ToolRunSkillScript,
		description: "Runs a program from a skill's scripts/ directory (as the skill's instructions name it, such as " +
			"scripts/extract.py) in a sandbox, with a command line and optional standard input, and returns " +
			"{exit_code, stdout, stderr}. Python, JavaScript and TypeScript programs run; shell scripts cannot.",
		parameters: `{"type":"object","properties":{` +
			`"skill":{"type":"string","description":"The skill's id"},` +
			`"script":{"type":"string","description":"The program: its path in the skill, such as scripts/extract.py (or just extract.py)"},` +
			`"args":{"type":"array","items":{"type":"string"},"description":"The program's command-line arguments, one string each"},` +
			`"stdin":{"type":"string","description":"Optional text for the program's standard input"}},` +
			`"required":["skill","script"],"additionalProperties":false}`,
		do: doRunSkillScript,
	},
}

func builtinByName(name string) *builtin {
	for i := range builtins {
		if builtins[i].name == name {
			return &builtins[i]
		}
	}
	for i := range authorTools {
		if authorTools[i].name == name {
			return &authorTools[i]
		}
	}
	return nil
}

// readOnly reports whether the tool only reads the catalog.
func (b *builtin) readOnly() bool {
	switch b.name {
	case ToolRunSkill, ToolRunSkillScript, ToolCreateSkill, ToolUpdateSkill, ToolDeleteSkill, ToolDevaiCreate, ToolDevaiUpdate, ToolDevaiDelete:
		return false
	}
	return true
}
