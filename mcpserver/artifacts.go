package mcpserver

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/run"
)

// MetaArtifacts is the _meta key of a tool result that lists the files the run left in its
// output directory (name, size, sha256, media_type each), for a client to fetch by run id.
const MetaArtifacts = "skillbox/artifacts"

// withArtifacts lists the files res's run left, by name, size, media type and sha256, in r: a
// text block a model reads, after the result's own (the structured content stays the skill's
// result, which an output schema may check), and in r's _meta. The bytes are never inline: a
// client fetches them (GET /v1/runs/{run_id}/artifacts/{name} on the HTTP face).
func withArtifacts(r *mcp.CallToolResult, res *run.Result) *mcp.CallToolResult {
	if res == nil || len(res.Artifacts) == 0 {
		return r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "files left by run %s:", res.RunID)
	for _, a := range res.Artifacts {
		fmt.Fprintf(&b, "\n- %s (%d bytes, %s, sha256 %s)", a.Name, a.Size, a.MediaType, a.SHA256)
	}
	r.Content = append(r.Content, &mcp.TextContent{Text: b.String()})
	if r.Meta == nil {
		r.Meta = mcp.Meta{}
	}
	r.Meta[MetaArtifacts] = res.Artifacts
	return r
}
