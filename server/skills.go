package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// maxResourceBytes bounds one resource read over HTTP.
const maxResourceBytes = 16 << 20

// summary is the metadata-only view of GET /v1/skills; a broken skill's problems name files
// relative to its skills directory, never the host's layout.
func (s *view) summary(sk *runtime.Skill) runtime.Summary { return summaryIn(s.rt, sk) }

// summaryIn is sk's summary in rt, with its visibility when it is a user's own.
func summaryIn(rt *runtime.Runtime, sk *runtime.Skill) runtime.Summary {
	sum := sk.Summary()
	if v := rt.VisibilityOf(sk); v == access.VisibilityUser {
		sum.Visibility = v
	}
	return sum
}

func (s *view) listSkills(c echo.Context) error {
	skills := s.rt.Skills()
	out := make([]runtime.Summary, 0, len(skills))
	for _, sk := range skills {
		out = append(out, s.summary(sk))
	}
	return c.JSON(http.StatusOK, map[string]any{"skills": out})
}

// skillDetail is GET /v1/skills/{id}: the manifest, the argument schema, requested vs granted
// (the grant's refused says what was asked and not given, and why), and the programs of its
// scripts/ with the grant they run under, as skillbox show prints them.
type skillDetail struct {
	runtime.Summary
	Entrypoint   string            `json:"entrypoint,omitempty"`
	SHA256       string            `json:"sha256,omitempty"`
	Parameters   json.RawMessage   `json:"parameters,omitempty"`
	Result       json.RawMessage   `json:"result,omitempty"`
	Requested    *spec.Permissions `json:"requested,omitempty"`
	RequestedLim *spec.Limits      `json:"requested_limits,omitempty"`
	Granted      *policy.Grant     `json:"granted,omitempty"`
	Problems     []string          `json:"problems,omitempty"`
	Instructions bool              `json:"instructions"`
	Resources    []string          `json:"resources"`
	// Programs are the skill's programs (POST /v1/skills/{id}/scripts/{script}/runs), by path
	// in the skill; ProgramsGranted what they may do (the manifest's or scripts/skillbox.json's
	// request under the policy), and ProgramProblems why they cannot run, when they cannot.
	Programs        []string      `json:"programs"`
	ProgramsGranted *policy.Grant `json:"programs_granted,omitempty"`
	ProgramProblems []string      `json:"programs_problems,omitempty"`
}

func (s *view) getSkill(c echo.Context) error {
	sk, err := s.rt.Skill(c.Param("id"))
	if err != nil {
		return noSkill(err, c.Param("id"))
	}
	// The module's hash checks an unchecked skill first, so the detail shows what the check found.
	hash := sk.ModuleHash()
	d := skillDetail{Summary: s.summary(sk), SHA256: hash, Granted: sk.Grant(), Instructions: sk.InstructionsPath() != ""}
	if m := sk.Manifest(); m != nil {
		d.Entrypoint, d.Parameters, d.Result, d.Requested, d.RequestedLim = m.Entrypoint, m.Parameters, m.Result, &m.Permissions, &m.Limits
	}
	d.Problems = sk.Problems()
	d.Programs, d.ProgramProblems = sk.Programs(), sk.ProgramProblems()
	if d.Programs == nil {
		d.Programs = []string{}
	} else {
		d.ProgramsGranted = sk.ProgramGrant()
	}
	d.Resources, _ = skillmd.ListResources(sk.Dir(), 1000)
	if d.Resources == nil {
		d.Resources = []string{}
	}
	return c.JSON(http.StatusOK, d)
}

// instructions is the SKILL.md body, processed when ?arguments= is given:
// base directory first, $ARGUMENTS replaced (or appended). The file is never modified.
func (s *view) instructions(c echo.Context) error {
	sk, err := s.rt.Skill(c.Param("id"))
	if err != nil {
		return noSkill(err, c.Param("id"))
	}
	if sk.InstructionsPath() == "" {
		return httpError(http.StatusNotFound, "not_found", "skill %q has no SKILL.md", c.Param("id"))
	}
	// Read as a resource of the skill: bounded, a regular file inside the skill's directory.
	doc, err := toolset.ReadInstructions(sk, maxResourceBytes)
	var re *skillmd.ResourceError
	switch {
	case errors.As(err, &re):
		return httpError(http.StatusNotFound, "not_found", "skill %q: %v", sk.ID(), err)
	case err != nil:
		return httpError(http.StatusUnprocessableEntity, "invalid_instructions", "%v", err)
	}
	body := doc.Body
	if c.QueryParams().Has("arguments") {
		// A remote client reads the skill's files through the API, not the host's disk: its base
		// directory is where this API serves them.
		base := strings.TrimSuffix(c.Request().URL.Path, "instructions") + "resources/"
		body = skillmd.Render(doc.Body, base, c.QueryParam("arguments"))
	}
	if accepts(c, "application/json") {
		name := doc.Name
		if meta := sk.Instructions(); meta != nil {
			name = meta.Name // named after its directory when the SKILL.md has no name
		}
		return c.JSON(http.StatusOK, map[string]any{"id": sk.ID(), "name": name, "description": doc.Description,
			"allowed_tools": doc.AllowedTools, "content": body})
	}
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(body))
}

func (s *view) resource(c echo.Context) error {
	sk, err := s.rt.Skill(c.Param("id"))
	if err != nil {
		return noSkill(err, c.Param("id"))
	}
	// echo routes on the raw path when a client escapes differently from Go (%20, %28):
	// decode it here; ReadResource still refuses ".." and the like after decoding.
	rel, err := url.PathUnescape(c.Param("*"))
	if err != nil {
		return httpError(http.StatusBadRequest, "bad_path", "the resource path is not valid URL escaping")
	}
	data, err := skillmd.ReadResource(sk.Dir(), rel, maxResourceBytes)
	switch {
	case errors.Is(err, skillmd.ErrNotFound):
		return httpError(http.StatusNotFound, "not_found", "skill %q has no resource %q", sk.ID(), rel)
	case errors.Is(err, skillmd.ErrInvalid), errors.Is(err, skillmd.ErrDenied):
		return httpError(http.StatusBadRequest, "bad_path", "%v", err)
	case errors.Is(err, skillmd.ErrTooLarge):
		return httpError(http.StatusRequestEntityTooLarge, "too_large", "%v", err)
	case err != nil:
		return err
	}
	ctype := http.DetectContentType(data)
	if filepath.Ext(rel) == ".md" {
		ctype = "text/markdown; charset=utf-8"
	}
	c.Response().Header().Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, ctype, data)
}

func accepts(c echo.Context, ctype string) bool {
	for _, a := range c.Request().Header.Values(echo.HeaderAccept) {
		if len(a) >= len(ctype) && (a == ctype || containsFold(a, ctype)) {
			return true
		}
	}
	return false
}
