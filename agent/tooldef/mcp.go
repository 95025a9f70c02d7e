package tooldef

import (
	"bytes"
	"encoding/json"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// MCPTool is a tool as an MCP server lists it (tools/list):
//
//	{"name":...,"title":...,"description":...,"inputSchema":{...},"outputSchema":{...},
//	 "annotations":{"title":...,"readOnlyHint":...,"openWorldHint":...}}
type MCPTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the manifest's result schema when it is an object schema, and omitted
	// otherwise: MCP requires an object at the root. A server that lists it must send each
	// result as structuredContent that conforms to it.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  MCPAnnotations  `json:"annotations"`
}

// MCPAnnotations are hints for an MCP client, derived from what the skill's runs are granted (not
// what its manifest asks for: the grant is what a run can actually do). Both hints are always
// written, because MCP's defaults (readOnlyHint false, openWorldHint true) are the unsafe
// reading for a sandboxed skill.
type MCPAnnotations struct {
	Title string `json:"title"`
	// ReadOnlyHint is true when the grant has no network and no writable file mount: such a
	// skill cannot change anything outside its own run.
	ReadOnlyHint bool `json:"readOnlyHint"`
	// OpenWorldHint is true when the grant has network hosts: the skill reaches outside the host.
	OpenWorldHint bool `json:"openWorldHint"`
}

// MCP returns the tools of the skills of c that can be called.
//
// # Notes
//
// A skill whose tool breaks one of MCP's rules ([VendorRules]: a name outside 1 to 128 of
// A-Z, a-z, 0-9, '_', '-' and '.'; an input schema whose properties are not objects) is left
// out, and so is one whose name OpenAI or Anthropic refuse (longer than 64 characters): MCP
// clients built on their SDKs (the OpenAI Agents SDK, LangChain, the AI SDK) hand every tool
// of the list on to the model's API, which then refuses every request. [LeftOut] says which
// were left out and why; the toolset's run_skill still runs them.
func MCP[S catalog.Skill](c catalog.Catalog[S]) []MCPTool {
	out := []MCPTool{}
	for _, t := range toolsFor(c, FormatMCP) {
		m := t.skill.Manifest()
		network, writes := reach(t.skill.Grant())
		out = append(out, MCPTool{
			Name:         t.name,
			Title:        m.Name,
			Description:  t.description,
			InputSchema:  t.schema,
			OutputSchema: objectSchema(m.Result),
			Annotations:  MCPAnnotations{Title: m.Name, ReadOnlyHint: !network && !writes, OpenWorldHint: network},
		})
	}
	return out
}

// reach says whether a grant lets runs use the network or write files. A missing grant grants
// nothing.
func reach(g *policy.Grant) (network, writes bool) {
	if g == nil {
		return false, false
	}
	for _, f := range g.Files {
		if f.Access == spec.ReadWrite {
			writes = true
		}
	}
	return len(g.Network) > 0, writes
}

// objectSchema returns a copy of schema when MCP accepts it as an output schema (the rule its
// input schemas keep: an object schema whose properties are objects), else nil: the tool is
// then listed without one.
func objectSchema(schema json.RawMessage) json.RawMessage {
	if len(schema) == 0 {
		return nil
	}
	root, problem := (&toolDef{schema: schema}).root()
	if problem != "" || mcpObjectSchemaProblem(root) != "" {
		return nil
	}
	return bytes.Clone(schema)
}
