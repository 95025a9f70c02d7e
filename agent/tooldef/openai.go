package tooldef

import (
	"encoding/json"

	"github.com/skillbox-dev/skillbox/catalog"
)

// OpenAITool is one entry of the "tools" of an OpenAI Chat Completions request:
//
//	{"type":"function","function":{"name":...,"description":...,"parameters":{...},"strict":false}}
type OpenAITool struct {
	Type     string         `json:"type"` // always "function"
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function an [OpenAITool] describes.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict asks OpenAI to constrain the model's arguments to the schema. It is true only when
	// the schema keeps to the subset strict mode accepts (see [StrictCompatible]): OpenAI refuses
	// the whole request when a strict schema is outside it.
	Strict bool `json:"strict"`
}

// OpenAI returns the tools of the skills of c that can be called.
//
// # Notes
//
// A skill whose tool breaks one of OpenAI's rules ([VendorRules]: a name longer than 64
// characters, from an id of more than 58; a description over 1,024 characters; oneOf, anyOf,
// allOf, enum or not at the top of its schema; an array schema without items) is left out: one
// such tool makes OpenAI refuse the whole request, every other tool with it. [LeftOut] says
// which were left out and why; the toolset's run_skill still runs them.
func OpenAI[S catalog.Skill](c catalog.Catalog[S]) []OpenAITool {
	out := []OpenAITool{}
	for _, t := range toolsFor(c, FormatOpenAI) {
		out = append(out, openAITool(t.toolDef))
	}
	return out
}

func openAITool(d *toolDef) OpenAITool {
	return OpenAITool{Type: "function", Function: OpenAIFunction{
		Name:        d.name,
		Description: d.description,
		Parameters:  clone(d.schema),
		Strict:      StrictCompatible(d.schema),
	}}
}
