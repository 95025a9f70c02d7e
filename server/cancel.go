package server

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
)

// cancelAccepted is the answer to POST /v1/runs/{id}/cancel: the run was asked to stop; its
// result event (and record) will say canceled, and who asked.
type cancelAccepted struct {
	RunID  string       `json:"run_id"`
	Status store.Status `json:"status"` // running: it has not stopped yet
	Links  runLinks     `json:"links"`
}

// cancelRun answers POST /v1/runs/{id}/cancel: it cancels a run in flight in this process,
// asynchronous or synchronous, and answers 202; the run then ends with error kind canceled
// and a message that names the key that asked. Only the run's caller (the user of the key that
// started it, else that key), or an admin, may (403 otherwise). A run that has finished is 409 with its status; one this
// process does not run is 404: with several replicas, a run is canceled through the replica
// that runs it (the message says so when the run history knows it is in flight elsewhere).
func (s *view) cancelRun(c echo.Context) error {
	id := c.Param("run_id")
	k, _ := c.Get(keyContext).(keyEntry)
	rec := s.liveRun(c, id)
	if rec == nil {
		return s.cancelGone(c, id)
	}
	if rec.placed {
		hist := s.historyOf(c, id)
		if hist != nil && hist.Status != store.StatusQueued { // it started on another node
			return s.cancelGone(c, id)
		}
		return s.cancelElsewhere(c, id, hist, rec.caller)
	}
	if k.Role < access.RoleAdmin && k.Caller() != rec.caller {
		return httpError(http.StatusForbidden, "forbidden",
			"run %q was started by another key: only that key or an admin may cancel it", id)
	}
	if !rec.cancelFor(fmt.Errorf("key %q asked for it", k.Key)) {
		return finished(id, rec.status())
	}
	return c.JSON(http.StatusAccepted, cancelAccepted{RunID: id, Status: store.StatusRunning, Links: linksFor(c, id)})
}

// cancelGone answers a cancel for a run this server does not track: 409 when it is known to
// have finished, else 404.
func (s *view) cancelGone(c echo.Context, id string) error {
	if rec, ok := s.recentRun(c, id); ok {
		return finished(id, statusOf(rec.Result))
	}
	rec := s.historyOf(c, id)
	switch {
	case rec == nil:
		return s.unknownRun(id)
	case !rec.Status.Final() && s.opts.Cluster != nil: // running on a node, or waiting for one
		return s.cancelElsewhere(c, id, rec, rec.Caller)
	case rec.Status == store.StatusRunning:
		return elsewhere(id, "cancel")
	}
	return finished(id, rec.Status)
}

// finished is the 409 for a cancel that came too late.
func finished(id string, status store.Status) error {
	e := httpError(http.StatusConflict, "run_finished", "run %q has already finished: %s; there is nothing to cancel", id, status)
	body := e.Message.(apiErrorBody)
	body.Details = []string{"status: " + string(status)}
	e.Message = body
	return e
}

// statusOf is a finished result's status in the run history's words.
func statusOf(res *run.Result) store.Status { return store.Status(run.StatusOf(res)) }
