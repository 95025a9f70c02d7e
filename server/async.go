package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
)

// asyncAccepted is the answer to POST ...runs?async=true once the run is admitted.
type asyncAccepted struct {
	RunID  string       `json:"run_id"`
	Status store.Status `json:"status"` // running, or queued (on a node of a cluster)
	Links  runLinks     `json:"links"`
}

// runLinks are where a run is read, watched and canceled.
type runLinks struct {
	Run    string `json:"run"`
	Events string `json:"events"`
	Cancel string `json:"cancel"`
}

// asyncParam reads ?async=: true or false, given at most once; anything else is a 400 that
// names it (a typo must not silently make a run synchronous).
func asyncParam(c echo.Context) (bool, error) { return boolParam(c, "async") }

// boolParam reads the query parameter name: false when absent, else true or false, given once;
// anything else is a 400 that names it.
func boolParam(c echo.Context, name string) (bool, error) {
	vals, ok := c.QueryParams()[name]
	if !ok {
		return false, nil
	}
	if len(vals) != 1 {
		return false, httpError(http.StatusBadRequest, "bad_request", "%s: give it once, true or false", name)
	}
	switch vals[0] {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, httpError(http.StatusBadRequest, "bad_request", "%s %q: want true or false", name, vals[0])
}

// runAsync starts req as a run that outlives the request: it answers 202 with the run's id and
// links once the runtime has admitted the run (its first event), or, when the runtime refuses
// it first, exactly what the synchronous route answers (404, 409, 422, 429, 503, or the result
// of a run that ended before it was admitted). The run's context is detached from the request
// (ctx keeps its values, its trace); the run ends by itself (its timeout), or by
// POST /v1/runs/{id}/cancel, or when the runtime closes. A client that goes away before the run
// is admitted cancels it: nobody could ever learn its id.
//
// # Errors
//
// 429 with Retry-After when the server already holds LiveRunOptions.MaxAsync asynchronous
// runs in flight.
func (s *view) runAsync(c echo.Context, ctx context.Context, req run.Request) error {
	if !s.live.reserve() {
		return &retryError{after: time.Second, err: httpError(http.StatusTooManyRequests, "busy",
			"this server already holds %d asynchronous runs in flight, its limit; try again later, or run without async=true",
			s.live.opts.MaxAsync)}
	}
	tr := s.live.track(context.WithoutCancel(ctx), &req, runOwner{req.Who.Caller(), s.rt.VisibleTo(req.Skill)}, true)
	type outcome struct {
		res *run.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer s.live.unreserve()
		res, err := s.rt.Run(tr.ctx, req)
		tr.end(res)
		done <- outcome{res, err}
	}()
	select {
	case <-tr.admitted:
		return s.accepted(c, tr.run.id)
	case o := <-done:
		select {
		case <-tr.admitted: // admitted, and already over: the run is still a resource
			return s.accepted(c, tr.run.id)
		default:
		}
		if s.placeable(o.err) {
			req.OnEvent = nil
			id, err := s.place(ctx, req, o.res)
			if err != nil {
				return err
			}
			return s.acceptedAs(c, id, placedStatus)
		}
		if herr := refusal(o.res, o.err); herr != nil {
			return herr
		}
		return c.JSON(http.StatusOK, linkResult(apiPrefix(c), o.res))
	case <-c.Request().Context().Done():
		tr.cancel(errors.New("its client went away before it was admitted"))
		return c.Request().Context().Err()
	}
}

// accepted answers 202 for the admitted run id, with its links under the API's prefix.
func (s *view) accepted(c echo.Context, id string) error {
	return s.acceptedAs(c, id, store.StatusRunning)
}

// acceptedAs answers 202 for run id, which stands at status: running, or queued for the
// cluster.
func (s *view) acceptedAs(c echo.Context, id string, status store.Status) error {
	l := linksFor(c, id)
	c.Response().Header().Set(echo.HeaderLocation, l.Run)
	return c.JSON(http.StatusAccepted, asyncAccepted{RunID: id, Status: status, Links: l})
}

// linksFor is where run id is read, watched and canceled, under the prefix this server is
// mounted at (the part of the matched route before /v1/).
func linksFor(c echo.Context, id string) runLinks {
	run := apiPrefix(c) + "/v1/runs/" + id
	return runLinks{Run: run, Events: run + "/events", Cancel: run + "/cancel"}
}
