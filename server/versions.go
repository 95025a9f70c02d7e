package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/version"
)

// installedSkill is the answer to an upload: the skill, and, when the runtime keeps versions,
// the version the upload recorded (its status, and for a pending one the diff an admin reads).
type installedSkill struct {
	runtime.Summary
	Version *version.Version `json:"recorded_version,omitempty"`
}

// installed answers an upload of sk with status, or 202 Accepted when the version it recorded
// waits for an admin's approval: the package is kept, and does not run.
func (s *view) installed(c echo.Context, rt *runtime.Runtime, status int, sk *runtime.Skill) error {
	out := installedSkill{Summary: summaryIn(rt, sk)}
	if v, err := rt.SkillVersion(c.Request().Context(), sk.ID(), sk.Digest()); err == nil {
		out.Version = &v
		if v.Status == version.Pending {
			status = http.StatusAccepted
		}
	}
	return c.JSON(status, out)
}

// versionList is the answer of GET /v1/skills/{id}/versions.
type versionList struct {
	Skill    string            `json:"skill"`
	Versions []version.Version `json:"versions"`
}

// listVersions answers GET /v1/skills/{id}/versions: every version, newest first, each with
// its audit trail (events).
func (s *view) listVersions(c echo.Context) error {
	list, err := s.rt.VersionHistory(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, versionList{Skill: c.Param("id"), Versions: list})
}

// versionQueue is the answer of GET /v1/versions.
type versionQueue struct {
	Status   version.Status    `json:"status"`
	Versions []version.Version `json:"versions"`
	// More says there are more than the limit asked for: approve or reject some, or ask more.
	More bool `json:"more"`
}

// findVersions answers GET /v1/versions?status=&limit=&events=: the review queue (status
// pending, the default) or the versions in another status, of every skill of the tenant, newest
// first, with events=true each with its audit trail. A user sees the tenant's and their own; a
// tenant's admin every user's, each naming the user to act as (Skillbox-User) to approve or
// reject it. The runtime decides what a valid query is.
func (s *view) findVersions(c echo.Context) error {
	v := c.QueryParams()
	if err := checkParams(v, "GET /v1/versions", "status", "limit", "events"); err != nil {
		return err
	}
	q := version.Query{Status: version.Status(v.Get("status"))}
	if q.Status == "" {
		q.Status = version.Pending
	}
	n, err := parseLimit(v, "versions", version.MaxQuery)
	if err != nil {
		return err
	}
	q.Limit = n
	if q.Events, err = boolParam(c, "events"); err != nil {
		return err
	}
	list, more, err := s.rt.FindVersions(c.Request().Context(), principal(c), q)
	if err != nil {
		return err
	}
	if list == nil {
		list = []version.Version{} // none is [], not null
	}
	return c.JSON(http.StatusOK, versionQueue{Status: q.Status, Versions: list, More: more})
}

// changeRequest is the optional body of POST /v1/skills/{id}/versions/{digest}/{action}.
type changeRequest struct {
	Note string `json:"note"`
}

// changeVersion applies an action of the versions' state machine; the runtime decides whether
// the key's role may. A server without keys does not offer approval at all: anyone who reaches
// it is "admin", so approving there would be no one's decision.
func (s *view) changeVersion(c echo.Context) error {
	var req changeRequest
	if err := s.decode(c, &req, 64<<10); err != nil {
		return err
	}
	action := c.Param("action")
	t, ok := version.Transitions[action]
	if !ok {
		return httpError(http.StatusNotFound, "not_found", "no version action %q: use approve, reject, publish, deprecate or yank", action)
	}
	if t.Role >= access.RoleAdmin && len(s.keys) == 0 {
		return httpError(http.StatusForbidden, "forbidden",
			"this server has no API keys, so it does not offer %s: give an admin a key (serve --keys), or %s on the server's machine with skillbox %s", action, action, action)
	}
	v, err := s.rt.ChangeVersion(c.Request().Context(), principal(c), c.Param("id"), c.Param("digest"), action, req.Note)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}
