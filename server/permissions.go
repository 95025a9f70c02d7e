package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
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
// the run, 409 when it ended (answered, timed out, or its run ended), 403 when the key may not
// grant it, 400 for an answer that is not one.
func (s *view) answerPermission(c echo.Context) error {
	var a run.PermissionAnswer
	if err := s.decode(c, &a, maxAnswerBytes); err != nil {
		return err
	}
	runID, id := c.Param("run_id"), c.Param("request")
	who := principal(c)
	err := s.rt.AnswerPermission(c.Request().Context(), who, runID, id, a)
	if errors.Is(err, run.ErrNoRequest) && s.opts.Cluster != nil {
		// On a node of a cluster the run may wait on another node: the answer goes there, and
		// that node's runtime decides it as this one would.
		err = s.answerElsewhere(c.Request().Context(), who, runID, id, a)
	}
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
	who := principal(c)
	list := s.rt.PermissionRequests(who)
	if s.opts.Cluster != nil {
		// On a node of a cluster, runs wait on every node: each says which of its own the key
		// may see. A node that does not reply in time is left out, and the log says so.
		list = s.waitingEverywhere(c.Request().Context(), who, list)
	}
	return c.JSON(http.StatusOK, permissionRequests{Requests: list})
}

// waitingEverywhere is the permission requests who may see waiting on every node of the
// cluster: here's (here), and what the others reply.
func (s *view) waitingEverywhere(ctx context.Context, who access.Principal, here []run.PermissionRequest) []run.PermissionRequest {
	body, err := json.Marshal(who)
	if err != nil {
		return here
	}
	replies, err := s.opts.Cluster.GatherPermissionRequests(ctx, s.t.name, body)
	if err != nil {
		s.logger.Warn("gather the permission requests of the cluster; listed those that came", "err", err)
	}
	seen := map[string]bool{}
	out := []run.PermissionRequest{}
	add := func(qs []run.PermissionRequest) {
		for _, q := range qs {
			if !seen[q.ID] {
				seen[q.ID] = true
				out = append(out, q)
			}
		}
	}
	add(here)
	for _, r := range replies {
		var qs []run.PermissionRequest
		if json.Unmarshal(r, &qs) == nil {
			add(qs)
		}
	}
	slices.SortFunc(out, func(a, b run.PermissionRequest) int { return a.AskedAt.Compare(b.AskedAt) })
	return out
}

// waitingHere replies to a node's gather: the requests waiting on this node that the principal
// in body may see, of its tenant.
func (s *Server) waitingHere(tenantName string, body []byte) []byte {
	var who access.Principal
	t := s.tenantNamed(tenantName)
	if t == nil || json.Unmarshal(body, &who) != nil || who.Tenant != tenantName {
		return []byte("[]")
	}
	out, _ := json.Marshal(t.rt.PermissionRequests(who))
	return out
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

// clusterAnswer is an answer to a permission request handed to the node that holds its run.
type clusterAnswer struct {
	Who     access.Principal     `json:"who"`
	Request string               `json:"request"`
	Answer  run.PermissionAnswer `json:"answer"`
}

// clusterAnswered is that node's reply: the error of its runtime's AnswerPermission, by kind.
type clusterAnswered struct {
	Error   string `json:"error,omitempty"` // "over", "may_not", "bad_answer", "failed"
	Message string `json:"message,omitempty"`
}

// answerKinds name the errors of AnswerPermission a node replies with; ErrNoRequest is no
// reply (another node may hold the run).
var answerKinds = map[string]error{"over": run.ErrRequestOver, "may_not": run.ErrMayNotAnswer, "bad_answer": run.ErrBadAnswer}

// answerElsewhere hands an answer to the node of the cluster that holds runID: run.ErrNoRequest
// when none does.
func (s *view) answerElsewhere(ctx context.Context, who access.Principal, runID, id string, a run.PermissionAnswer) error {
	body, err := json.Marshal(clusterAnswer{Who: who, Request: id, Answer: a})
	if err != nil {
		return err
	}
	reply, held, err := s.opts.Cluster.AnswerPermission(ctx, s.t.name, runID, body)
	switch {
	case err != nil:
		return err
	case !held:
		return run.ErrNoRequest
	}
	var r clusterAnswered
	if err := json.Unmarshal(reply, &r); err != nil {
		return fmt.Errorf("the node that holds run %s replied %q: %w", runID, reply, err)
	}
	if r.Error == "" {
		return nil
	}
	if kind, ok := answerKinds[r.Error]; ok {
		return fmt.Errorf("%w: %s", kind, r.Message)
	}
	return errors.New(r.Message)
}

// heldAnswer gives an answer another node handed on to the run it is for, when this node's
// tenant holds a request of it; false when it does not (the node that does replies).
func (s *Server) heldAnswer(tenantName, runID string, body []byte) ([]byte, bool) {
	t := s.tenantNamed(tenantName)
	var m clusterAnswer
	if t == nil || json.Unmarshal(body, &m) != nil || m.Who.Tenant != tenantName {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
	defer cancel()
	err := t.rt.AnswerPermission(ctx, m.Who, runID, m.Request, m.Answer)
	if errors.Is(err, run.ErrNoRequest) {
		return nil, false
	}
	r := clusterAnswered{}
	if err != nil {
		r.Error, r.Message = "failed", err.Error()
		for kind, e := range answerKinds {
			if errors.Is(err, e) {
				r.Error = kind
			}
		}
	}
	reply, _ := json.Marshal(r)
	return reply, true
}

// answerTimeout bounds a node's giving of an answer another node handed on.
const answerTimeout = 2 * time.Second
