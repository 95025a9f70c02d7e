package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/store"
)

// History is the run history GET /v1/runs and GET /v1/runs/{id} read. A store.Store is one; the
// server only reads it (the runtime's recorder writes it).
type History interface {
	// FindRun returns the run with that id, or an error that is store.ErrNotFound.
	FindRun(ctx context.Context, id string) (store.Run, error)
	// ListRuns returns a page of runs, newest first; a query it cannot answer is an error that
	// is store.ErrBadQuery, and its message names the parameter.
	ListRuns(ctx context.Context, q store.Query) (store.Page, error)
}

var _ History = (store.Store)(nil)

// historyTimeout bounds one read of the history: a database that hangs must not hold a request
// (and its connection) forever.
const historyTimeout = 30 * time.Second

// listQuery are the parameters GET /v1/runs takes.
var listQuery = []string{"skill", "status", "caller", "since", "until", "limit", "cursor"}

// listRuns answers GET /v1/runs?skill=&status=&caller=&since=&until=&limit=&cursor=: a page of the history,
// newest first. It only parses the parameters into their types; the history decides what a
// valid query is (store.Query.Check) and says which parameter is wrong.
func (s *view) listRuns(c echo.Context) error {
	if s.history == nil {
		return noHistory()
	}
	q, err := parseRunQuery(c.QueryParams())
	if err != nil {
		return err
	}
	q.Viewer = viewer(c) // another user's own runs are not listed to a user
	ctx, cancel := context.WithTimeout(c.Request().Context(), historyTimeout)
	defer cancel()
	page, err := s.history.ListRuns(ctx, q)
	switch {
	case errors.Is(err, store.ErrBadQuery):
		return httpError(http.StatusBadRequest, "bad_request", "%v", err)
	case err != nil:
		return s.historyDown(err)
	}
	if page.Runs == nil {
		page.Runs = []store.Run{} // an empty page is [], not null
	}
	for i, r := range page.Runs {
		// A run whose end is still on its way to the history reads as the runtime has it.
		if !r.Status.Final() && q.Status == "" {
			if rec, ok := s.recentRun(c, r.ID); ok {
				listed := store.RunOf(&rec)
				listed.Result, listed.Logs, listed.Artifacts = nil, nil, nil // a list leaves them out, as the history's does
				page.Runs[i] = listed
			}
		}
	}
	return c.JSON(http.StatusOK, page)
}

// parseRunQuery reads GET /v1/runs's parameters: each at most once, none unknown (a misspelt
// filter would otherwise answer every run).
func parseRunQuery(v url.Values) (store.Query, error) {
	var q store.Query
	if err := checkParams(v, "GET /v1/runs", listQuery...); err != nil {
		return q, err
	}
	q.Skill, q.Status, q.Caller, q.Cursor = v.Get("skill"), store.Status(v.Get("status")), v.Get("caller"), v.Get("cursor")
	var err error
	if q.Since, err = parseTime(v, "since"); err != nil {
		return q, err
	}
	if q.Until, err = parseTime(v, "until"); err != nil {
		return q, err
	}
	q.Limit, err = parseLimit(v, "runs", store.MaxLimit)
	return q, err
}

// parseTime reads the time parameter name of v: the zero time when absent, else an RFC 3339
// time, or a 400 that names the parameter.
func parseTime(v url.Values, name string) (time.Time, error) {
	text := v.Get(name)
	if text == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return t, httpError(http.StatusBadRequest, "bad_request", "%s %q: want an RFC 3339 time, such as 2026-01-02T15:04:05Z", name, text)
	}
	return t, nil
}

// parseLimit reads a list route's limit parameter: 0 when absent (the lister's default), else a
// number the lister bounds to 1 to max. A client's 0 is a mistake, not a default.
func parseLimit(v url.Values, what string, max int) (int, error) {
	limit := v.Get("limit")
	if limit == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(limit)
	if err != nil || n == 0 {
		return 0, httpError(http.StatusBadRequest, "bad_request", "limit %q: want a number of %s, 1 to %d", limit, what, max)
	}
	return n, nil
}

// checkParams says which of the parameters v of route is unknown or given twice: a misspelt
// filter would otherwise answer everything.
func checkParams(v url.Values, route string, known ...string) error {
	for name, vals := range v {
		if !slices.Contains(known, name) {
			return httpError(http.StatusBadRequest, "bad_request", "unknown parameter %q: %s takes %s", name, route, strings.Join(known, ", "))
		}
		if len(vals) > 1 {
			return httpError(http.StatusBadRequest, "bad_request", "%s: give it once", name)
		}
	}
	return nil
}

// getRun answers GET /v1/runs/{id}: from the history when there is one, else (or when the
// history does not have it yet, or is down) from the runtime's records of its recent runs.
func (s *view) getRun(c echo.Context) error {
	id := c.Param("run_id")
	rec, inMemory := s.recentRun(c, id)
	if s.history == nil {
		if !inMemory {
			return httpError(http.StatusNotFound, "not_found", "no recent run %q (the runtime keeps the most recent ones)", id)
		}
		rec.Result = linkResult(apiPrefix(c), rec.Result)
		return c.JSON(http.StatusOK, rec)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), historyTimeout)
	defer cancel()
	found, err := s.history.FindRun(ctx, id)
	if err == nil && !sees(c, found.VisibleTo) {
		err = store.ErrNotFound // another user's own run: as if there were none
	}
	switch {
	case err == nil && inMemory && !found.Status.Final():
		// Its end is on its way to the history; the runtime's record of it is the newer.
		found = store.RunOf(&rec)
	case err == nil:
	case inMemory:
		// Recorded in memory but not (yet) in the history: its recorder failed, or lags.
		found = store.RunOf(&rec)
		if !errors.Is(err, store.ErrNotFound) {
			s.logger.Error("read the run history; answered from memory", "run", id, "err", err)
		}
	case errors.Is(err, store.ErrNotFound):
		return httpError(http.StatusNotFound, "not_found", "no run %q in the run history", id)
	default:
		return s.historyDown(err)
	}
	// The history's record, with the result and logs the policy keeps: the same before and
	// after a restart.
	found.Artifacts = linkArtifacts(apiPrefix(c), found.ID, found.Artifacts)
	return c.JSON(http.StatusOK, found)
}

// noHistory is GET /v1/runs's answer on a server given no history to read.
func noHistory() error {
	return httpError(http.StatusNotImplemented, "no_history",
		"this server keeps no run history to list: start skillbox serve with a store (--data-dir or --database), or mount the server with Options.History")
}

// historyDown is the answer when the history cannot be read: the client learns it is
// unavailable, the log learns why (a database error can name hosts a client should not see).
func (s *view) historyDown(err error) error {
	s.logger.Error("read the run history", "err", err)
	return httpError(http.StatusServiceUnavailable, "unavailable", "the run history cannot be read now; try again later").WithInternal(err)
}
