package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/permit"
	"github.com/skillbox-dev/skillbox/run"
)

// Permission requests over HTTP. A run the HTTP face started may ask a person for what the
// policy's ask section lets one grant (run.AnswerThroughAPI): the request is a
// "permission_request" event on the run's stream, it is listed by GET /v1/permission-requests,
// and it is answered by POST /v1/runs/{run_id}/permission-requests/{request}. The runtime decides
// who may answer, and what an answer may be; this translates.

// maxAnswerBytes bounds an answer's body: {"decision": "for", "for_seconds": 86400}.
const maxAnswerBytes = 1 << 10

// permissionAnswered is the answer to a POST of an answer.
type permissionAnswered struct {
	RunID    string       `json:"run_id"`
	Request  string       `json:"request"`
	Decision run.Decision `json:"decision"`
}

// answerPermission answers POST /v1/runs/{run_id}/permission-requests/{request} with the body
// {"decision": "once" | "for" | "deny", "for_seconds": N}: 404 when no such request waits for
// the run (or it is not the caller's to see), 409 when it ended (answered, timed out, or its run
// ended), 403 when the key may not grant it, 400 for an answer that is not one.
func (s *view) answerPermission(c echo.Context) error {
	var a run.PermissionAnswer
	if err := s.decode(c, &a, maxAnswerBytes); err != nil {
		return err
	}
	runID, id := c.Param("run_id"), c.Param("request")
	err := s.rt.AnswerPermission(c.Request().Context(), principal(c), runID, id, a)
	switch {
	case errors.Is(err, run.ErrNoRequest):
		return httpError(http.StatusNotFound, "not_found", "no permission request %q waits for run %q", id, runID)
	case errors.Is(err, run.ErrRequestOver):
		return httpError(http.StatusConflict, "conflict", "permission request %q is over: it was answered, it timed out, or its run ended; the run went on without this answer", id)
	case errors.Is(err, run.ErrMayNotAnswer):
		return httpError(http.StatusForbidden, "forbidden", "%v", err)
	case errors.Is(err, run.ErrBadAnswer):
		return httpError(http.StatusBadRequest, "bad_request", "%v", err)
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, permissionAnswered{RunID: runID, Request: id, Decision: a.Decision})
}

// permissionRequests is the answer to GET /v1/permission-requests.
type permissionRequests struct {
	Requests []run.PermissionRequest `json:"requests"`
}

// listPermissionRequests answers GET /v1/permission-requests: the requests waiting for an
// answer that the key may see (an admin's every one, anyone else's those of their own runs),
// oldest first.
func (s *view) listPermissionRequests(c echo.Context) error {
	if err := checkParams(c.QueryParams(), "GET /v1/permission-requests"); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, permissionRequests{Requests: s.rt.PermissionRequests(principal(c))})
}

// permitList is the answer to GET /v1/permits.
type permitList struct {
	Permits []permit.Permit `json:"permits"`
}

// listPermits answers GET /v1/permits: the permits in force the key may see (an admin's, every
// one of the tenant; anyone else's, those that cover their own runs), newest first.
func (s *view) listPermits(c echo.Context) error {
	if err := checkParams(c.QueryParams(), "GET /v1/permits"); err != nil {
		return err
	}
	list, err := s.rt.Permits(c.Request().Context(), principal(c))
	if err != nil {
		s.logger.Error("list the permits", "err", err)
		return httpError(http.StatusServiceUnavailable, "unavailable", "the permits cannot be read now; try again later").WithInternal(err)
	}
	return c.JSON(http.StatusOK, permitList{Permits: list})
}

// revokePermit answers DELETE /v1/permits/{id}: 204 once the permit ends, 404 when none is in
// force, 403 for a key that is not an admin's.
func (s *view) revokePermit(c echo.Context) error {
	id := c.Param("id")
	err := s.rt.RevokePermit(c.Request().Context(), principal(c), id)
	switch {
	case errors.Is(err, permit.ErrNotFound):
		return httpError(http.StatusNotFound, "not_found", "no permit %q is in force", id)
	case errors.Is(err, run.ErrMayNotAnswer):
		return httpError(http.StatusForbidden, "forbidden", "%v", err)
	case err != nil:
		s.logger.Error("revoke a permit", "permit", id, "err", err)
		return httpError(http.StatusServiceUnavailable, "unavailable", "the permit cannot be revoked now; try again later").WithInternal(err)
	}
	return c.NoContent(http.StatusNoContent)
}
