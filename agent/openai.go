package agent

import "encoding/json"

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

// OpenAITools returns the tools of the skills of c that can be called.
//
// # Notes
//
// A skill whose tool name is longer than OpenAI's 64 characters (an id of more than 58) is left
// out: one invalid name makes OpenAI refuse the whole request.
func OpenAITools(c Catalog) []OpenAITool {
	out := []OpenAITool{}
	for _, t := range tools(c) {
		if len(t.name) > MaxOpenAIToolName {
			continue
		}
		out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{
			Name:        t.name,
			Description: t.skill.Description(),
			Parameters:  t.schema,
			Strict:      StrictCompatible(t.schema),
		}})
	}
	return out
}
