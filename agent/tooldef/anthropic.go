package tooldef

import (
	"encoding/json"

	"github.com/skillbox-dev/skillbox/catalog"
)

// AnthropicTool is one entry of the "tools" of an Anthropic Messages request:
//
//	{"name":...,"description":...,"input_schema":{...}}
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Anthropic returns the tools of the skills of c that can be called.
//
// # Notes
//
// A skill whose tool breaks one of Anthropic's rules ([VendorRules]: a name longer than 64
// characters; oneOf, allOf or anyOf at the top of its schema) is left out: one such tool makes
// Anthropic refuse the whole request. [LeftOut] says which were left out and why.
func Anthropic[S catalog.Skill](c catalog.Catalog[S]) []AnthropicTool {
	out := []AnthropicTool{}
	for _, t := range toolsFor(c, FormatAnthropic) {
		out = append(out, anthropicTool(t.toolDef))
	}
	return out
}

func anthropicTool(d *toolDef) AnthropicTool {
	return AnthropicTool{Name: d.name, Description: d.description, InputSchema: clone(d.schema)}
}
