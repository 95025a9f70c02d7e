package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/agent/runmodule"
	"github.com/skillbox-dev/skillbox/agent/search"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/telemetry"
	"github.com/skillbox-dev/skillbox/run"
)

// wellKnown serves the tool manifest at /.well-known/skills.json ([tooldef.WellKnown]), with a
// Skillbox-Warning header for each tool left out ([Server.leftOut]).
func (s *view) wellKnown(c echo.Context) error {
	m := tooldef.WellKnown(s.rt, s.opts.Provider)
	s.leftOut(c, tooldef.FormatWellKnown, append(tooldef.LeftOut(s.rt, tooldef.FormatWellKnown),
		tooldef.ListBreaches(tooldef.FormatWellKnown, len(m.Tools))...))
	return c.JSON(http.StatusOK, m)
}

// tools returns tool definitions in one vendor's exact shape, ready to paste into an SDK call:
// ?format=openai (default), anthropic or mcp. ?tools= picks which ([toolset.Offer]): all (the
// server's default unless Options.Offer says otherwise: a tool per executable skill, then the
// progressive-disclosure toolset), skills or disclosure. POST /v1/tools/call calls any of them.
// A tool the vendor would refuse is left out, and said so ([Server.leftOut]).
func (s *view) tools(c echo.Context) error {
	offer := s.opts.Offer
	r := s.opts.ToolNames.Over(s.rt)
	if !toolset.MayAuthor(principal(c)) {
		r = toolset.WithoutAuthoring(r) // create_skill and the rest only for those who may author
	}
	if q := c.QueryParam("tools"); q != "" {
		o, err := toolset.ParseOffer(strings.ToLower(q))
		if err != nil {
			return httpError(http.StatusBadRequest, "bad_request", "%v", err)
		}
		offer = o
	}
	f, err := toolset.ParseFormat(c.QueryParam("format"))
	if err != nil {
		return httpError(http.StatusBadRequest, "bad_request", "%v", err)
	}
	l := offer.List(r, f)
	warnings := s.leftOut(c, f, l.LeftOut)
	if f == tooldef.FormatMCP {
		return c.JSON(http.StatusOK, mcpTools{Tools: l.Tools.([]tooldef.MCPTool), Warnings: warnings})
	}
	return c.JSON(http.StatusOK, l.Tools)
}

// toolCallRequest is a tool call as a model made it. Arguments is a JSON object, or a string
// holding one: OpenAI's tool calls carry their arguments as a string, Anthropic's as an object,
// and either can be passed on as it came.
type toolCallRequest struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// toolCallResponse is a tool call's outcome: Text is what to send back to the model (the
// result as JSON, the instructions, the file, or "error: <kind>: <message>"), IsError says it
// failed (Anthropic's is_error, MCP's isError), Result is the run's or the tool's Result.
type toolCallResponse struct {
	Name    string      `json:"name"`
	Text    string      `json:"text"`
	IsError bool        `json:"is_error"`
	Result  *run.Result `json:"result"`
}

// toolCall makes one tool call of any tool /v1/tools lists, as toolset.Handle does for the
// embedding program. A call that failed (unknown tool, bad arguments, a run that failed) is
// still 200: the text says what went wrong in words a model can act on. A remote client is
// never handed a host path, and the runs a call makes are recorded as this face's and key's.
func (s *view) toolCall(c echo.Context) error {
	var req toolCallRequest
	if err := s.decode(c, &req, s.runBodyBytes()); err != nil {
		return err
	}
	if req.Name == "" {
		return httpError(http.StatusBadRequest, "bad_request", `the body needs "name": a tool's name as GET /v1/tools lists it`)
	}
	args := req.Arguments
	var quoted string
	if json.Unmarshal(args, &quoted) == nil {
		args = json.RawMessage(quoted)
	}
	k, _ := c.Get(keyContext).(keyEntry)
	// The runs a call makes continue the caller's trace, as a run request's do.
	ctx := telemetry.FromHTTP(c.Request().Context(), c.Request().Header)
	ctx = toolset.WithOrigin(ctx, toolset.Origin{Face: run.FaceHTTP, Who: k.Principal, Remote: true})
	res, text, err := toolset.HandleResult(ctx, s.opts.ToolNames.Over(s.rt), req.Name, args)
	return c.JSON(http.StatusOK, toolCallResponse{Name: req.Name, Text: text, IsError: err != nil, Result: res})
}

// runModulesRequest is a model's message whose [RUN_MODULE] blocks to answer.
type runModulesRequest struct {
	Text *string `json:"text"`
}

// runModules answers POST /v1/run-modules: each [RUN_MODULE] block of a model's message called
// in order, as runmodule.Run calls them for the embedding program, with the answer (the
// [MODULE_RESULT] blocks) as the next user message. Like a tool call it is 200 when a call
// failed: the answer says what went wrong in words a model can act on.
func (s *view) runModules(c echo.Context) error {
	var req runModulesRequest
	if err := s.decode(c, &req, runmodule.MaxTextBytes+envelopeBytes); err != nil {
		return err
	}
	if req.Text == nil {
		return httpError(http.StatusBadRequest, "bad_request", `the body needs "text": the model's message, with its [RUN_MODULE] blocks`)
	}
	if len(*req.Text) > runmodule.MaxTextBytes {
		return httpError(http.StatusRequestEntityTooLarge, "too_large", "the message is %d bytes, more than %d", len(*req.Text), runmodule.MaxTextBytes)
	}
	k, _ := c.Get(keyContext).(keyEntry)
	ctx := telemetry.FromHTTP(c.Request().Context(), c.Request().Header)
	ctx = toolset.WithOrigin(ctx, toolset.Origin{Face: run.FaceHTTP, Who: k.Principal, Remote: true})
	return c.JSON(http.StatusOK, runmodule.AnswerOf(runmodule.Run(ctx, s.opts.ToolNames.Over(s.rt), *req.Text)))
}

// mcpTools is the mcp format's body: MCP's tools/list result, with the tools left out beside it
// (absent when none were).
type mcpTools struct {
	Tools    []tooldef.MCPTool `json:"tools"`
	Warnings []tooldef.Breach  `json:"warnings,omitempty"`
}

// warningHeader carries, one value each, the tools a format left out and why: the openai and
// anthropic bodies are bare arrays, ready to paste, with no room beside the tools.
const warningHeader = "Skillbox-Warning"

// maxWarningHeaders bounds the header values of one response; the log line has the count.
const maxWarningHeaders = 20

// leftOut says which of the skills' tools format f left out of a list, and why, and whether the
// whole list breaks a vendor's rule (toolset.Listing's LeftOut): one warning header each, and a
// log line. It returns them for a body that has room.
func (s *view) leftOut(c echo.Context, f tooldef.Format, breaches []tooldef.Breach) []tooldef.Breach {
	if len(breaches) == 0 {
		return nil
	}
	h := c.Response().Header()
	for i, b := range breaches {
		if i == maxWarningHeaders {
			h.Add(warningHeader, fmt.Sprintf("and %d more", len(breaches)-i))
			break
		}
		h.Add(warningHeader, headerSafe(b.String()))
	}
	tools := make([]string, 0, len(breaches))
	for _, b := range breaches {
		tools = append(tools, b.Tool)
	}
	s.logger.Warn("tools left out of the list: the vendor would refuse the whole request with them (skillbox validate says why)",
		"format", f, "count", len(breaches), "tools", tools)
	return breaches
}

// headerSafe replaces what a header value may not hold.
func headerSafe(v string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, v)
}

type searchRequest struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// search ranks skills by name, description and tags (BM25).
func (s *view) search(c echo.Context) error {
	var req searchRequest
	if err := s.decode(c, &req, 64<<10); err != nil {
		return err
	}
	if strings.TrimSpace(req.Query) == "" {
		return httpError(http.StatusBadRequest, "bad_request", `the body needs a non-empty "query"`)
	}
	if req.Limit < 0 || req.Limit > 100 {
		return httpError(http.StatusBadRequest, "bad_request", `"limit" must be 0 (the default, 10) to 100`)
	}
	return c.JSON(http.StatusOK, map[string]any{"results": s.index().Search(req.Query, req.Limit)})
}

// index returns the search index of the current skills, rebuilt only after a scan changed them.
func (s *view) index() *search.Index {
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if gen := s.rt.Generation(); s.idx == nil || s.idxGen != gen {
		s.idx, s.idxGen = search.NewIndex(s.rt.Skills()), gen
	}
	return s.idx
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
