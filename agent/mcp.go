package agent

import (
	"bytes"
	"encoding/json"

	"github.com/skillbox-dev/skillbox/runtime"
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

// MCPTools returns the tools of the skills of c that can be called.
func MCPTools(c Catalog) []MCPTool {
	out := []MCPTool{}
	for _, t := range tools(c) {
		m := t.skill.Manifest()
		network, writes := reach(t.skill.Grant())
		out = append(out, MCPTool{
			Name:         t.name,
			Title:        m.Name,
			Description:  m.Description,
			InputSchema:  t.schema,
			OutputSchema: objectSchema(m.Result),
			Annotations:  MCPAnnotations{Title: m.Name, ReadOnlyHint: !network && !writes, OpenWorldHint: network},
		})
	}
	return out
}

// reach says whether a grant lets runs use the network or write files. A missing grant grants
// nothing.
func reach(g *runtime.Grant) (network, writes bool) {
	if g == nil {
		return false, false
	}
	for _, f := range g.Files {
		if f.Access == runtime.ReadWrite {
			writes = true
		}
	}
	return len(g.Network) > 0, writes
}

// objectSchema returns a copy of schema when its root is {"type":"object",...}, else nil.
func objectSchema(schema json.RawMessage) json.RawMessage {
	var root struct {
		Type any `json:"type"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &root) != nil || root.Type != "object" {
		return nil
	}
	return bytes.Clone(schema)
}
