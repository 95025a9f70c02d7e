package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/agent"
	"github.com/skillbox-dev/skillbox/runtime"
)

// runRequest is the body of POST /v1/skills/{id}/runs.
type runRequest struct {
	Args json.RawMessage `json:"args"`
}

// anyRunRequest is seed 000's POST /v1/runs. "args" is accepted for "input" too, and "skill"
// may be a tool name (skill_word_count) as the tool manifests give it.
type anyRunRequest struct {
	Skill string          `json:"skill"`
	Input json.RawMessage `json:"input"`
	Args  json.RawMessage `json:"args"`
}

func (s *Server) runSkill(c echo.Context) error {
	var req runRequest
	if err := s.decode(c, &req, s.opts.MaxRunBodyBytes); err != nil {
		return err
	}
	return s.run(c, c.Param("id"), req.Args)
}

func (s *Server) runAny(c echo.Context) error {
	var req anyRunRequest
	if err := s.decode(c, &req, s.opts.MaxRunBodyBytes); err != nil {
		return err
	}
	if req.Skill == "" {
		return httpError(http.StatusBadRequest, "bad_request", `the body needs "skill": the id of the skill to run`)
	}
	if len(req.Input) > 0 && len(req.Args) > 0 {
		return httpError(http.StatusBadRequest, "bad_request", `send the arguments as "input" or as "args", not both`)
	}
	args := req.Input
	if len(args) == 0 {
		args = req.Args
	}
	id := req.Skill
	if _, err := s.rt.Skill(id); err != nil {
		if alt, ok := agent.SkillID(id); ok {
			id = alt
		}
	}
	return s.run(c, id, args)
}

// decode reads a JSON body of at most max bytes into v, refusing unknown fields.
func (s *Server) decode(c echo.Context, v any, max int64) error {
	body := http.MaxBytesReader(c.Response(), c.Request().Body, max)
	data, err := io.ReadAll(body)
	if err != nil {
		return err // *http.MaxBytesError becomes 413
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return httpError(http.StatusBadRequest, "bad_request", "the body is not the expected JSON: %v", err)
	}
	if dec.More() {
		return httpError(http.StatusBadRequest, "bad_request", "the body has data after its JSON object")
	}
	return nil
}

// run runs a skill for a request: 404 for an unknown skill, 422 for invalid arguments (before
// any slot is taken), 429 when the queue is full, and otherwise 200 with the run's result, or a
// text/event-stream of its events when the client asks for one. The request's context is the
// run's: a client that goes away cancels its run.
func (s *Server) run(c echo.Context, id string, args json.RawMessage) error {
	if bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = nil // "args": null is no arguments
	}
	sk, err := s.rt.Skill(id)
	if err != nil || sk.Kind() != runtime.Executable {
		return httpError(http.StatusNotFound, "not_found", "no executable skill %q", id)
	}
	if sk.Status() != runtime.StatusActive {
		return httpError(http.StatusConflict, "skill_broken", "skill %q is broken: %v", id, sk.Err())
	}
	if _, err := sk.Schema().Prepare(args); err != nil {
		re, _ := err.(*runtime.RunError)
		return httpError(http.StatusUnprocessableEntity, "invalid_args", "%s", re.Message)
	}
	release, err := s.acquire(c)
	if err != nil {
		return err
	}
	defer release()

	s.metrics.inFlight.Add(1)
	defer s.metrics.inFlight.Add(-1)
	stream := strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "text/event-stream")
	var opts []runtime.RunOption
	var sse *sseWriter
	if stream {
		sse = newSSE(c)
		opts = append(opts, runtime.OnEvent(sse.event))
	}
	res, _ := s.rt.Run(c.Request().Context(), id, args, opts...)
	s.history.add(res)
	s.metrics.observe(res)
	if stream {
		return sse.err
	}
	return c.JSON(http.StatusOK, res)
}

// acquire takes a run slot, waiting in the queue if all are busy; a full queue is 429.
func (s *Server) acquire(c echo.Context) (func(), error) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	default:
	}
	select {
	case s.waiting <- struct{}{}:
	default:
		s.metrics.rejected.Add(1)
		c.Response().Header().Set("Retry-After", "1")
		return nil, httpError(http.StatusTooManyRequests, "too_many_requests", "%d runs are running and %d waiting; try again shortly", cap(s.slots), cap(s.waiting))
	}
	defer func() { <-s.waiting }()
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	case <-c.Request().Context().Done():
		return nil, httpError(http.StatusServiceUnavailable, "canceled", "the request ended while the run was queued")
	}
}

// sseWriteTimeout bounds one event write to a slow client.
const sseWriteTimeout = 10 * time.Second

// sseWriter streams run events as server-sent events: "event: <type>" and one JSON "data" line.
type sseWriter struct {
	c    echo.Context
	mu   sync.Mutex
	err  error
	open bool
}

func newSSE(c echo.Context) *sseWriter { return &sseWriter{c: c} }

func (w *sseWriter) event(e runtime.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	r := w.c.Response()
	if !w.open {
		r.Header().Set(echo.HeaderContentType, "text/event-stream")
		r.Header().Set("Cache-Control", "no-cache")
		r.Header().Set("X-Accel-Buffering", "no")
		r.WriteHeader(http.StatusOK)
		w.open = true
	}
	data, err := json.Marshal(e)
	if err != nil {
		w.err = err
		return
	}
	// A client that stops reading must not hold the run (and its slot) forever: every write has
	// a deadline, and a failed write ends the stream (the run's context then ends with it).
	_ = http.NewResponseController(r.Writer).SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if _, err := fmt.Fprintf(r, "event: %s\ndata: %s\n\n", e.Type, data); err != nil {
		w.err = err
		return
	}
	r.Flush()
}

func (s *Server) getRun(c echo.Context) error {
	res, ok := s.history.get(c.Param("run_id"))
	if !ok {
		return httpError(http.StatusNotFound, "not_found", "no recent run %q (the server keeps the last %d)", c.Param("run_id"), s.opts.RunHistory)
	}
	return c.JSON(http.StatusOK, res)
}

// history remembers the last n results by run id.
type history struct {
	mu    sync.Mutex
	n     int
	byID  map[string]*runtime.Result
	order []string
}

func newHistory(n int) *history { return &history{n: n, byID: map[string]*runtime.Result{}} }

func (h *history) add(r *runtime.Result) {
	if r == nil || h.n <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byID[r.RunID] = r
	h.order = append(h.order, r.RunID)
	for len(h.order) > h.n {
		delete(h.byID, h.order[0])
		h.order = h.order[1:]
	}
}

func (h *history) get(id string) (*runtime.Result, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.byID[id]
	return r, ok
}
