// Package prompt writes the system prompt that lists a catalog's skills by metadata only and
// tells a model how to use them: with tool calls ([System]), or, for a model without tool
// calling, with the [RUN_MODULE] text protocol of package runmodule ([RunModule]). It is apart
// from the toolset because only an agent loop that owns the prompt needs it; a face does not.
package prompt

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// maxPromptDescription bounds one skill's description in a system prompt, in runes: the Agent
// Skills format caps descriptions at 1,024 characters, and a skill is untrusted, so one skill
// must not be able to fill the prompt.
const maxPromptDescription = 1024

// System returns a system prompt, or a part of one, that lists the usable skills of c by
// metadata only (id, name, description; executable or instructions) and tells the model how to
// use them with tools: load_skill before following a skill, skill_<id> or run_skill to run one,
// read_skill_resource for a skill's other files. It is the skills catalog for the system prompt
// (what a get_skills_system_prompt function returns): the model sees what exists, and loads the
// rest when a task calls for it.
//
// The text is deterministic (skills by id), so a provider's prompt cache keeps it between
// requests while the skills stay the same. Descriptions are written on one line and cut at
// 1,024 characters: they come from skill packages, which may not be trusted to keep the
// prompt's layout.
func System(c catalog.Catalog[*runtime.Skill]) string {
	var b strings.Builder
	catalogSection(&b, toolset.ListSkills(c))
	b.WriteString(`## How to use skills

1. When a task matches a skill, call load_skill with its id first, and follow what it says. It returns the skill's instructions (with the directory its files are relative to), or for a program without instructions, its description and arguments.
2. Run an executable skill with its own tool, skill_<id> with '-' written '_' (word-count is skill_word_count), or with run_skill {"skill": "<id>", "args": {...}}. Arguments are checked against the skill's schema before it runs.
3. When instructions refer to another file of the skill, read it with read_skill_resource {"skill": "<id>", "resource": "<path relative to the skill's directory>"}, and only when you need it.
4. Instruction skills cannot be run: carry out their instructions with the tools you have.
5. list_skills returns this list again, as JSON, with each skill's tags.
6. A tool result that starts with "error: " is a failure: "error: <kind>: <message>". Fix what the message names; do not repeat the same call unchanged.
`)
	return b.String()
}

// RunModule is [System] for a model without tool calling: it lists the same
// skills and explains the [RUN_MODULE] text protocol instead, where the model writes
//
//	[RUN_MODULE]
//	{"name": "word-count", "args": {"text": "..."}}
//	[/RUN_MODULE]
//
// in its reply, [runmodule.Run] runs each block, and [runmodule.FormatResult] gives each result
// back as a [MODULE_RESULT] block. The toolset's tools are modules too, so the model can load
// instructions and read files in the same way.
func RunModule(c catalog.Catalog[*runtime.Skill]) string {
	skills := toolset.ListSkills(c)
	var b strings.Builder
	catalogSection(&b, skills)
	example, exampleArgs := "<id>", `{...}`
	for _, s := range skills {
		if s.Kind == spec.Executable {
			example = s.ID
			break
		}
	}
	fmt.Fprintf(&b, `## How to use skills

You use a skill by writing a block like this in your reply:

[RUN_MODULE]
{"name": %q, "args": %s}
[/RUN_MODULE]

The block holds one JSON object: "name" is a skill id or one of the modules below, "args" is an object of its arguments ({} when there are none). You may write several blocks in one reply; they run in order. Then stop: the next message answers each block, in order, with

[MODULE_RESULT]
{"name": "<name>", "success": true, "result": ...}
[/MODULE_RESULT]

or "success": false and an "error" with a "kind" and a "message" that says what to fix. A block that is not well-formed is answered with an error too; write it again correctly.

Besides the skills, these modules exist:
- load_skill {"name": "<id>", "arguments": "<optional text>"}: a skill's instructions. Load a skill before following it, and before running a skill whose arguments you are unsure of.
- read_skill_resource {"skill": "<id>", "resource": "<path>"}: another file of a skill, by its path relative to the skill's directory, when its instructions refer to it.
- list_skills {}: this list again, as JSON, with each skill's tags.

Instruction skills cannot be run: carry out their instructions yourself. Write the markers exactly as shown, each on its own line, and only to run something.
`, example, exampleArgs)
	return b.String()
}

// catalogSection writes the list of skills, executable ones first.
func catalogSection(b *strings.Builder, skills []toolset.SkillInfo) {
	b.WriteString("# Skills\n\n")
	if len(skills) == 0 {
		b.WriteString("No skills are available.\n\n")
		return
	}
	b.WriteString("These skills are available. Only their descriptions are here: load a skill to read the rest.\n\n")
	for _, kind := range []spec.Kind{spec.Executable, spec.Instructions} {
		first := true
		for _, s := range skills {
			if s.Kind != kind {
				continue
			}
			if first {
				if kind == spec.Executable {
					b.WriteString("Executable skills (programs you run):\n")
				} else {
					b.WriteString("Instruction skills (guides you load and follow):\n")
				}
				first = false
			}
			b.WriteString("- ")
			b.WriteString(s.ID)
			b.WriteString(": ")
			b.WriteString(oneLine(s.Name, 100))
			if d := oneLine(s.Description, maxPromptDescription); d != "" && d != s.Name {
				b.WriteString(" — ")
				b.WriteString(d)
			}
			b.WriteString("\n")
		}
		if !first {
			b.WriteString("\n")
		}
	}
}

// oneLine collapses every run of white space (newlines included) and control characters in s
// to one space, and cuts the result at max runes.
func oneLine(s string, max int) string {
	if len(s) <= max && plainLine(s) {
		return s // the usual description: nothing to do, nothing to allocate
	}
	var b strings.Builder
	space, n := false, 0
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if n >= max {
			b.WriteString("…")
			break
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// plainLine reports whether s is printable ASCII with single spaces between words: what oneLine
// would return unchanged.
func plainLine(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || (c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' ')) {
			return false
		}
	}
	return true
}
