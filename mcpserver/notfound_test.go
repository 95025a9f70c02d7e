package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/mcpserver"
)

// Over MCP a skill that is not there is named with the ids nearest to it, and the operator's
// directories stay on the host, for a local client and a remote one alike.
func TestNotFoundNamesNearestIDs(t *testing.T) {
	t.Parallel()
	for _, remote := range []bool{false, true} {
		t.Run(fmt.Sprintf("remote=%v", remote), func(t *testing.T) {
			e := newEnv(t, mcpserver.Options{Remote: remote})
			cs := e.connect(t, legacyProtocol, nil)
			for _, tc := range []struct{ tool, args, want string }{
				{"run_skill", `{"skill":"ehco","args":{}}`, `not_found: no skill "ehco"; did you mean echo?; list_skills gives the ids of the skills there are`},
				{"load_skill", `{"name":"gide"}`, `not_found: no skill "gide"; did you mean guide?; list_skills gives the ids of the skills there are`},
				{"run_skill", `{"skill":"guide","args":{}}`, `not_found: skill "guide" has instructions only (a SKILL.md, no code): it is read, not run; read it with skillbox instructions guide, or a model with load_skill`},
			} {
				res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
				if err != nil {
					t.Fatal(err)
				}
				text := res.Content[0].(*mcp.TextContent).Text
				if !res.IsError || text != tc.want {
					t.Errorf("%s %s: isError %v, text\n got %q\nwant %q", tc.tool, tc.args, res.IsError, text, tc.want)
				}
				if strings.Contains(text, e.dir) {
					t.Errorf("%s: the text names the skills directory %s", tc.tool, e.dir)
				}
			}
		})
	}
}
