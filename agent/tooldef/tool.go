package tooldef

import (
	"context"
	"encoding/json"
)

// Tool is a tool independent of any vendor, such as one of the progressive-disclosure toolset's
// (package toolset): convert it with [OpenAIToolset], [AnthropicToolset] or [MCPToolset], or
// register it with your own framework.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments (an object schema).
	Parameters json.RawMessage
	// Handler makes the call. The toolset's handlers have the contract of toolset.Handle: the
	// text for the model also when the error is not nil.
	Handler func(ctx context.Context, argsJSON []byte) (string, error)
	// ReadOnly and OpenWorld are the tool's hints for an MCP client ([MCPAnnotations]): whether
	// a call changes nothing outside itself, and whether it reaches outside the host. The zero
	// value claims neither read-only nor open-world.
	ReadOnly, OpenWorld bool
}

// OpenAIToolset returns tools in the shape of [OpenAI], so both lists can be sent in one
// request: append(OpenAI(rt), OpenAIToolset(toolset.Tools(rt))...). Strict is set when the
// schema allows it ([StrictCompatible]). A tool that breaks one of OpenAI's rules is left out,
// as [OpenAI] leaves it out; [ToolsetLeftOut] says which.
func OpenAIToolset(tools []Tool) []OpenAITool {
	out := make([]OpenAITool, 0, len(tools))
	for _, d := range toolsetFor(tools, FormatOpenAI) {
		out = append(out, openAITool(d))
	}
	return out
}

// AnthropicToolset returns tools in the shape of [Anthropic], leaving out those that break
// one of Anthropic's rules.
func AnthropicToolset(tools []Tool) []AnthropicTool {
	out := make([]AnthropicTool, 0, len(tools))
	for _, d := range toolsetFor(tools, FormatAnthropic) {
		out = append(out, anthropicTool(d))
	}
	return out
}

// toolsetDef returns t as the vendor rules see it.
func toolsetDef(t Tool) *toolDef {
	return &toolDef{name: t.Name, description: t.Description, schema: t.Parameters}
}

// toolsetDefs returns tools as the vendor rules see them.
func toolsetDefs(tools []Tool) []*toolDef {
	out := make([]*toolDef, len(tools))
	for i, t := range tools {
		out[i] = toolsetDef(t)
	}
	return out
}

// toolsetFor returns the tools that format f lists.
func toolsetFor(tools []Tool, f Format) []*toolDef {
	var out []*toolDef
	for _, d := range toolsetDefs(tools) {
		if d.keeps(f) {
			out = append(out, d)
		}
	}
	return out
}

// clone copies a schema, so a caller that edits what it is given edits only its copy.
func clone(raw json.RawMessage) json.RawMessage { return append(json.RawMessage(nil), raw...) }

// MCPToolset returns tools in the shape of [MCP], leaving out those that break one of the
// rules [MCP] keeps. The annotations are the tools' own hints ([Tool.ReadOnly],
// [Tool.OpenWorld]).
func MCPToolset(tools []Tool) []MCPTool {
	out := make([]MCPTool, 0, len(tools))
	for _, t := range tools {
		d := toolsetDef(t)
		if !d.keeps(FormatMCP) {
			continue
		}
		out = append(out, MCPTool{Name: d.name, Title: d.name, Description: d.description, InputSchema: clone(d.schema),
			Annotations: MCPAnnotations{Title: d.name, ReadOnlyHint: t.ReadOnly, OpenWorldHint: t.OpenWorld}})
	}
	return out
}
