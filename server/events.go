package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
)

// sseKeepAlive is how often a quiet event stream sends a comment: proxies keep the connection,
// and a client that went away is noticed (its write fails) even while the run is silent.
const sseKeepAlive = 15 * time.Second

// runEvents answers GET /v1/runs/{id}/events: the run's events as server-sent events, each
// with "id: N" (1, 2, 3… in the order they happened), first those kept so far, then live ones
// until the result event, and then the stream ends. A client resumes after event N with the
// Last-Event-ID header (what EventSource sends when it reconnects) or, without EventSource,
// ?after=N; the header wins when both are given, as it is the newer.
//
// A run whose events this server no longer keeps, but whose result the runtime still holds,
// answers that result as its one event (without an id: its number is not known any more).
// Otherwise 404, and the message says what the server knows: that the run is in flight in
// another process, or finished and its events expired, or that it knows nothing of it.
//
// The watcher only reads what the run's events left behind: a slow client never holds the run
// (each write has a deadline, sseWriteTimeout, and a failed write ends the stream).
func (s *view) runEvents(c echo.Context) error {
	id := c.Param("run_id")
	after, err := resumePoint(c)
	if err != nil {
		return err
	}
	rec := s.liveRun(c, id)
	if rec != nil && rec.placed { // queued by this node for the cluster: the cluster has its events
		_, err := s.followEvents(c, id, after, true)
		return err
	}
	if rec == nil {
		if handled, err := s.clusterEvents(c, id, after); handled {
			return err
		}
		return s.eventsGone(c, id)
	}
	w := newSSE(c)
	w.mu.Lock()
	w.start() // the client learns at once that the run is there, even if it is quiet
	w.c.Response().Flush()
	w.mu.Unlock()
	keepAlive := time.NewTicker(sseKeepAlive)
	defer keepAlive.Stop()
	n := after
	for {
		evs, done, changed := rec.since(n)
		for _, k := range evs {
			n++
			w.send(n, k.name(), k.payload())
		}
		if w.err != nil || done {
			return nil // the stream is over: the client has it all, or has gone
		}
		select {
		case <-changed:
		case <-keepAlive.C:
			w.send(0, "", nil)
		case <-c.Request().Context().Done():
			return nil
		}
	}
}

// resumePoint is the number of the last event the client has: Last-Event-ID, else ?after=,
// else 0. A value that is not a whole number of events is a 400 that names it.
func resumePoint(c echo.Context) (int, error) {
	name, v := "Last-Event-ID", c.Request().Header.Get("Last-Event-ID")
	if v == "" {
		vals := c.QueryParams()["after"]
		if len(vals) > 1 {
			return 0, httpError(http.StatusBadRequest, "bad_request", "after: give it once")
		}
		if len(vals) == 0 {
			return 0, nil
		}
		name, v = "after", vals[0]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, httpError(http.StatusBadRequest, "bad_request",
			"%s %q: want the number of the last event received (the id of its \"id:\" line), 0 or more", name, v)
	}
	return n, nil
}

// eventsGone answers for a run this server keeps no events of: its result alone, while the
// runtime still holds it, else 404 saying what is known of the run.
func (s *view) eventsGone(c echo.Context, id string) error {
	if rec, ok := s.recentRun(c, id); ok {
		w := newSSE(c)
		w.send(0, "result", run.Event{Type: "result", RunID: id, Result: rec.Result})
		return nil
	}
	rec := s.historyOf(c, id)
	switch {
	case rec == nil:
		return s.unknownRun(id)
	case rec.Status == store.StatusRunning:
		return elsewhere(id, "events")
	}
	return httpError(http.StatusNotFound, "expired",
		"run %q finished (%s) more than %s ago and this server no longer keeps its events; GET /v1/runs/%s reads its record",
		id, rec.Status, s.live.opts.Keep, id)
}

// historyOf is the run history's record of run id, or nil when there is no history, it does
// not know the run, the caller may not see it (sees), or it cannot be read (then logged): an
// answer that only refines a 404 does not fail for it.
func (s *view) historyOf(c echo.Context, id string) *store.Run {
	if s.history == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), historyTimeout)
	defer cancel()
	rec, err := s.history.FindRun(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.logger.Error("read the run history", "run", id, "err", err)
		}
		return nil
	}
	if !sees(c, rec.VisibleTo) {
		return nil
	}
	return &rec
}

// elsewhere is the 404 for a run the history says is in flight, which this process does not
// run: another replica sharing the history runs it. what names what was asked for.
func elsewhere(id, what string) error {
	return httpError(http.StatusNotFound, "not_here",
		"run %q is in flight in another process (another replica sharing this run history): ask that one for its %s", id, what)
}

// unknownRun is the 404 for a run nothing here knows of.
func (s *view) unknownRun(id string) error {
	return httpError(http.StatusNotFound, "not_found",
		"no run %q in this process: it may run, or have run, in another process (each replica keeps its own runs' events), or it finished more than %s ago and was let go",
		id, s.live.opts.Keep)
}
