package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/run"
)

// elicitAsker puts a run's permission requests to the person behind the MCP client that made
// the call, as a form elicitation: allow for this run, allow this skill's version for a number
// of minutes, or deny. The runtime decides what is asked and what an answer may be; this
// translates.
type elicitAsker struct{ ss *mcp.ServerSession }

// askerFor returns the Asker of a call, nil when its client takes no form elicitation, or takes
// no request while it waits for its call (the stateless revision: see withAnswers): then nobody
// is asked this way.
func askerFor(req *mcp.CallToolRequest) run.Asker {
	if req == nil || req.Session == nil || !takesForms(req.ClientCapabilities()) {
		return nil
	}
	if ip := req.Session.InitializeParams(); ip == nil || ip.ProtocolVersion >= "2026-07-28" {
		return nil
	}
	return elicitAsker{req.Session}
}

// The fields of the form.
const (
	fieldDecision = "decision"
	fieldMinutes  = "minutes"
)

// errDismissed is a form the person dismissed without choosing: no answer.
var errDismissed = errors.New("the person dismissed the request")

func (a elicitAsker) Ask(ctx context.Context, q run.PermissionRequest) (run.PermissionAnswer, error) {
	res, err := a.ss.Elicit(ctx, elicitParams(q))
	if err != nil {
		return run.PermissionAnswer{}, err
	}
	return answerOf(q, res)
}

// elicitParams is the form that asks q.
func elicitParams(q run.PermissionRequest) *mcp.ElicitParams {
	maxMinutes, defMinutes := q.GrantMinutes()
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			fieldDecision: map[string]any{
				"type":  "string",
				"title": "Decision",
				"oneOf": []any{
					map[string]any{"const": string(run.AllowOnce), "title": "Allow for this run"},
					map[string]any{"const": string(run.AllowFor), "title": fmt.Sprintf("Allow %s for a time", q.Skill)},
					map[string]any{"const": string(run.Deny), "title": "Deny"},
				},
				"default": string(run.Deny),
			},
			fieldMinutes: map[string]any{
				"type":        "integer",
				"title":       "For how many minutes",
				"description": "With " + `"Allow for a time"` + " only.",
				"minimum":     1,
				"maximum":     maxMinutes,
				"default":     defMinutes,
			},
		},
		"required": []string{fieldDecision},
	}
	return &mcp.ElicitParams{Mode: "form", Message: q.Describe(), RequestedSchema: schema,
		Meta: mcp.Meta{MetaRunID: q.RunID, "skillbox/permissionRequest": q.ID}}
}

// answerOf is the answer a person gave to q in res: declining is a deny, dismissing is no
// answer (an error).
func answerOf(q run.PermissionRequest, res *mcp.ElicitResult) (run.PermissionAnswer, error) {
	if res == nil {
		return run.PermissionAnswer{}, errDismissed
	}
	switch res.Action {
	case "accept":
	case "decline":
		return run.PermissionAnswer{Decision: run.Deny}, nil
	default: // cancel: dismissed without a choice
		return run.PermissionAnswer{}, errDismissed
	}
	maxMinutes, defMinutes := q.GrantMinutes()
	d, _ := res.Content[fieldDecision].(string)
	switch run.Decision(d) {
	case run.AllowOnce, run.Deny:
		return run.PermissionAnswer{Decision: run.Decision(d)}, nil
	case run.AllowFor:
		m, ok := res.Content[fieldMinutes].(float64)
		if !ok {
			if i, isInt := res.Content[fieldMinutes].(int); isInt {
				m, ok = float64(i), true
			}
		}
		if !ok {
			m = float64(defMinutes)
		}
		if m < 1 || m > float64(maxMinutes) || m != math.Trunc(m) {
			return run.PermissionAnswer{}, fmt.Errorf("minutes %v: want a whole number from 1 to %d", m, maxMinutes)
		}
		return run.PermissionAnswer{Decision: run.AllowFor, ForSeconds: int64(m) * 60}, nil
	}
	return run.PermissionAnswer{}, fmt.Errorf("decision %q: want %s, %s or %s", d, run.AllowOnce, run.AllowFor, run.Deny)
}
