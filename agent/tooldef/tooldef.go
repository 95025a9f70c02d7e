// Package tooldef writes the tool definitions an agent backend hands a model, in each vendor's
// shape (OpenAI, Anthropic, MCP, and the /.well-known/skills.json manifest), and holds the rules
// each vendor sets for them ([VendorRules]): a tool that breaks one is left out of that vendor's
// list, and [LeftOut] says why, because one bad tool makes a vendor refuse the whole request.
//
// Every skill's tool comes from one place, the skill's normalised JSON Schema
// ([catalog.Skill]'s Schema), so a model sees exactly the arguments the runtime will validate.
// Only skills that can run are tools: executable and active. Tools that are not skills' (the
// progressive-disclosure toolset of package toolset, or a caller's own) are [Tool] values,
// converted with [OpenAIToolset], [AnthropicToolset] and [MCPToolset] under the same rules.
//
// Tool names are "skill_" followed by the skill's id with '-' written '_' ([Name]), valid for
// every provider; [SkillID] maps a tool call back to the skill. This package reads skills through
// package catalog: it links no engine, and a face that only lists tools needs nothing else.
package tooldef

import (
	"bytes"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/spec"
)

// tool is what every tool format is made from: the skill, and its tool as the vendor rules see
// it.
type tool struct {
	skill catalog.Skill
	*toolDef
}

// tools returns the skills of c that can be called, in c's order, with their tool names and a
// copy of their schemas (a caller may change what it is given without changing the skill). A
// skill whose SKILL.md sets disable-model-invocation is no tool: tools are what a model calls.
func tools[S catalog.Skill](c catalog.Catalog[S]) []tool {
	var out []tool
	for _, s := range c.Skills() {
		if !catalog.Present(s) || s.Kind() != spec.Executable || !s.Status().Usable() || !s.ModelInvocable() || s.Manifest() == nil || s.Schema() == nil {
			continue
		}
		out = append(out, tool{skill: s, toolDef: &toolDef{skill: s.ID(), name: Name(s.ID()),
			description: s.Description(), schema: bytes.Clone(s.Schema().JSON()), compiled: s.Schema()}})
	}
	return out
}

// toolsFor returns the tools of c that format f lists: those that break none of its rules
// (see [LeftOut] for the others).
func toolsFor[S catalog.Skill](c catalog.Catalog[S], f Format) []tool {
	all := tools(c)
	out := all[:0]
	for _, t := range all {
		if t.keeps(f) {
			out = append(out, t)
		}
	}
	return out
}
