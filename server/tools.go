package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/agent"
)

// wellKnown serves the tool manifest at /.well-known/skills.json ([agent.WellKnown]).
func (s *Server) wellKnown(c echo.Context) error {
	return c.JSON(http.StatusOK, agent.WellKnown(s.rt, s.opts.Provider))
}

// tools returns the executable skills as tool definitions in one vendor's exact shape, ready to
// paste into an SDK call: ?format=openai (default), anthropic or mcp.
func (s *Server) tools(c echo.Context) error {
	switch f := strings.ToLower(c.QueryParam("format")); f {
	case "", "openai":
		return c.JSON(http.StatusOK, agent.OpenAITools(s.rt))
	case "anthropic":
		return c.JSON(http.StatusOK, agent.AnthropicTools(s.rt))
	case "mcp":
		return c.JSON(http.StatusOK, map[string]any{"tools": agent.MCPTools(s.rt)})
	default:
		return httpError(http.StatusBadRequest, "bad_request", "format %q: use openai, anthropic or mcp", f)
	}
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
