package agent

import "encoding/json"

// AnthropicTool is one entry of the "tools" of an Anthropic Messages request:
//
//	{"name":...,"description":...,"input_schema":{...}}
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// AnthropicTools returns the tools of the skills of c that can be called.
func AnthropicTools(c Catalog) []AnthropicTool {
	out := []AnthropicTool{}
	for _, t := range tools(c) {
		out = append(out, AnthropicTool{Name: t.name, Description: t.skill.Description(), InputSchema: t.schema})
	}
	return out
}
