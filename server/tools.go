package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/agent"
)

// wellKnown serves the tool manifest at /.well-known/skills.json ([agent.WellKnown]), with a
// Skillbox-Warning header for each tool left out ([Server.leftOut]).
func (s *Server) wellKnown(c echo.Context) error {
	m := agent.WellKnown(s.rt, s.opts.Provider)
	s.leftOut(c, agent.FormatWellKnown, len(m.Tools))
	return c.JSON(http.StatusOK, m)
}

// tools returns the executable skills as tool definitions in one vendor's exact shape, ready to
// paste into an SDK call: ?format=openai (default), anthropic or mcp. A tool the vendor would
// refuse is left out, and said so ([Server.leftOut]).
func (s *Server) tools(c echo.Context) error {
	switch f := strings.ToLower(c.QueryParam("format")); f {
	case "", "openai":
		list := agent.OpenAITools(s.rt)
		s.leftOut(c, agent.FormatOpenAI, len(list))
		return c.JSON(http.StatusOK, list)
	case "anthropic":
		list := agent.AnthropicTools(s.rt)
		s.leftOut(c, agent.FormatAnthropic, len(list))
		return c.JSON(http.StatusOK, list)
	case "mcp":
		list := agent.MCPTools(s.rt)
		return c.JSON(http.StatusOK, mcpTools{Tools: list, Warnings: s.leftOut(c, agent.FormatMCP, len(list))})
	default:
		return httpError(http.StatusBadRequest, "bad_request", "format %q: use openai, anthropic or mcp", f)
	}
}

// mcpTools is the mcp format's body: MCP's tools/list result, with the tools left out beside it
// (absent when none were).
type mcpTools struct {
	Tools    []agent.MCPTool `json:"tools"`
	Warnings []agent.Breach  `json:"warnings,omitempty"`
}

// warningHeader carries, one value each, the tools a format left out and why: the openai and
// anthropic bodies are bare arrays, ready to paste, with no room beside the tools.
const warningHeader = "Skillbox-Warning"

// maxWarningHeaders bounds the header values of one response; the log line has the count.
const maxWarningHeaders = 20

// leftOut says which tools format f left out of a list of n, and why (agent.LeftOut), and
// whether the whole list breaks a vendor's rule (agent.ListBreaches): one warning header each,
// and a log line. It returns them for a body that has room.
func (s *Server) leftOut(c echo.Context, f agent.Format, n int) []agent.Breach {
	breaches := append(agent.LeftOut(s.rt, f), agent.ListBreaches(f, n)...)
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
func (s *Server) search(c echo.Context) error {
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
func (s *Server) index() *agent.Index {
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if gen := s.rt.Generation(); s.idx == nil || s.idxGen != gen {
		s.idx, s.idxGen = agent.NewIndex(s.rt.Skills()), gen
	}
	return s.idx
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
