package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/internal/telemetry"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// runRequest is the body of POST /v1/skills/{id}/runs.
type runRequest struct {
	Args json.RawMessage `json:"args"`
	// Digest pins the version to run (run.Request.Digest): whole, or at least 8 hex digits.
	Digest string `json:"digest"`
}

// anyRunRequest is the body of POST /v1/runs, {"skill": ..., "input": {...}}. "args" is
// accepted for "input" too, and "skill" may be a tool name (skill_word_count) as the tool
// manifests give it.
type anyRunRequest struct {
	Skill string          `json:"skill"`
	Input json.RawMessage `json:"input"`
	Args  json.RawMessage `json:"args"`
	// Digest pins the version to run, as in runRequest.
	Digest string `json:"digest"`
	// SkillVersionID names the skill and pins its version at once, as /.well-known/skills.json
	// advertises them: "<id>@sha256:<digest>" (tooldef.WellKnownTool).
	SkillVersionID string `json:"skill_version_id"`
}

func (s *view) runSkill(c echo.Context) error {
	var req runRequest
	if err := s.decode(c, &req, s.runBodyBytes()); err != nil {
		return err
	}
	return s.run(c, run.Request{Skill: c.Param("id"), Args: req.Args, Digest: req.Digest})
}

// scriptRunRequest is the body of POST /v1/skills/{id}/scripts/{script}/runs: the program's
// command line and standard input.
type scriptRunRequest struct {
	Args  []string `json:"args"`
	Stdin *string  `json:"stdin"`
}

// runScript runs a program of a skill (a file of its scripts/ directory, or one named by its path
// in the skill, its slashes escaped: core%2Fbuild.py); its result is {exit_code, stdout,
// stderr}. A program that exits non-zero is a run that succeeded with that exit code.
func (s *view) runScript(c echo.Context) error {
	var req scriptRunRequest
	if err := s.decode(c, &req, s.runBodyBytes()); err != nil {
		return err
	}
	// echo gives the segment as the client escaped it: the runtime refuses ".." and the like
	// after decoding.
	script, err := url.PathUnescape(c.Param("script"))
	if err != nil {
		return httpError(http.StatusBadRequest, "bad_path", "the program's name is not valid URL escaping")
	}
	if script == "" {
		// Without it the request would run the skill's execute, which a caller of this route
		// did not ask for.
		return httpError(http.StatusBadRequest, "bad_path", "name the program: POST /v1/skills/%s/scripts/<program>/runs, such as scripts/report.py escaped as scripts%%2Freport.py", c.Param("id"))
	}
	r := run.Request{Skill: c.Param("id"), Script: script, Argv: req.Args}
	if req.Stdin != nil {
		r.Stdin = []byte(*req.Stdin)
	}
	return s.run(c, r)
}

func (s *view) runAny(c echo.Context) error {
	var req anyRunRequest
	if err := s.decode(c, &req, s.runBodyBytes()); err != nil {
		return err
	}
	if req.SkillVersionID != "" {
		id, digest, ok := strings.Cut(req.SkillVersionID, "@")
		switch {
		case !ok || id == "" || !strings.HasPrefix(digest, "sha256:"):
			return httpError(http.StatusBadRequest, "bad_request", `"skill_version_id" must be "<id>@sha256:<digest>", as /.well-known/skills.json gives it`)
		case req.Skill != "" && req.Skill != id, req.Digest != "" && req.Digest != digest:
			return httpError(http.StatusBadRequest, "bad_request", `"skill_version_id" names another skill or version than "skill" or "digest": send one`)
		}
		req.Skill, req.Digest = id, digest
	}
	if req.Skill == "" {
		return httpError(http.StatusBadRequest, "bad_request", `the body needs "skill": the id of the skill to run (or "skill_version_id")`)
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
		if alt, ok := tooldef.SkillID(id); ok {
			id = alt
		}
	}
	return s.run(c, run.Request{Skill: id, Args: args, Digest: req.Digest})
}

// envelopeBytes is what a run request's body may hold beyond its arguments: the skill's id, the
// field names, whitespace.
const envelopeBytes = 4 << 10

// runBodyBytes bounds a run request's body: the runtime's bound on arguments
// (Runtime.MaxArgsBytes, which the policy and skillbox --max-args-bytes set), and the envelope.
// The runtime decides; the body is read within its answer, so no client makes the server hold
// more than the runtime would take.
func (s *view) runBodyBytes() int64 { return s.rt.MaxArgsBytes() + envelopeBytes }

// decode reads a JSON body of at most max bytes into v, refusing unknown fields.
func (s *view) decode(c echo.Context, v any, max int64) error {
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

// run runs a skill for a request: the runtime decides everything (the skill, the arguments, room to
// run); this translates. A run that happened answers 200 with its result, or a text/event-stream of
// its events when the client asks for one. Refusals before a run: 404 no such skill (409 a broken
// one), 422 invalid arguments, 429 with Retry-After when the runtime is at capacity or the caller's
// tenant at its quota, 503 when it is closing. The request's context is the run's: a client that
// goes away cancels its run, and the run's span continues the trace of its W3C headers.
func (s *view) run(c echo.Context, req run.Request) error {
	async, err := asyncParam(c)
	if err != nil {
		return err
	}
	k, _ := c.Get(keyContext).(keyEntry)
	req.Face, req.Who = run.FaceHTTP, k.Principal
	// A person answers the run's permission requests through the API (permissions.go).
	req.Asker = run.AnswerThroughAPI
	// The run's span continues the caller's trace (traceparent, tracestate, baggage).
	ctx := telemetry.FromHTTP(c.Request().Context(), c.Request().Header)
	// On a node of a cluster, a run this node cannot admit now goes to the cluster's queue,
	// for a node with room, rather than wait here; while runs wait there, a new one joins
	// them rather than take a slot here ahead of them.
	if s.opts.Cluster != nil {
		req.NoWait, req.Yield = true, s.opts.Cluster.QueueBacklog()
	}
	if async {
		return s.runAsync(c, ctx, req)
	}
	var sse *sseWriter
	if strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "text/event-stream") {
		sse = newSSE(c)
		req.OnEvent = sse.event
	}
	// Tracked, a second client may watch the run (GET /v1/runs/{id}/events) or cancel it.
	tr := s.live.track(ctx, &req, runOwner{req.Who.Caller(), s.rt.VisibleTo(req.Skill)}, false)
	res, err := s.rt.Run(tr.ctx, req)
	tr.end(res)
	if s.placeable(err) {
		return s.runPlaced(c, ctx, req, res, sse)
	}
	if herr := refusal(res, err); herr != nil {
		if sse == nil || !sse.opened() {
			return herr
		}
	}
	if sse != nil {
		if !sse.opened() { // not admitted, yet a result (a compile failure): one result event
			sse.event(run.Event{Type: "result", RunID: res.RunID, Result: res})
		}
		return sse.err
	}
	return c.JSON(http.StatusOK, linkResult(apiPrefix(c), res))
}

// runPlaced answers a synchronous run this node queued for the cluster: its events as they
// come, when the client asked for them, and its result.
func (s *view) runPlaced(c echo.Context, ctx context.Context, req run.Request, refused *run.Result, sse *sseWriter) error {
	req.OnEvent = nil
	id, err := s.place(ctx, req, refused)
	if err != nil {
		return err
	}
	res, err := s.awaitPlaced(c, id, sse)
	switch {
	case sse != nil && sse.opened():
		return sse.err // the stream is the answer, ended as it could be
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, linkResult(apiPrefix(c), res))
}

// refusal is the HTTP error of a run refused before it started, or of one whose outcome is the
// server's rather than the skill's (its files found no room: quota_exceeded), or nil.
func refusal(res *run.Result, err error) error {
	if err == nil || res.Error == nil {
		return nil
	}
	msg := res.Error.Message
	switch res.Error.Kind {
	case run.KindNotFound:
		// A lookup's message names the skill and why (the nearest ids of a missing one).
		var nf *runtime.NotFoundError
		switch {
		case errors.As(err, &nf) && errors.Is(err, run.ErrBroken):
			return httpError(http.StatusConflict, "skill_broken", "%s", msg)
		case errors.Is(err, run.ErrBroken):
			return httpError(http.StatusConflict, "skill_broken", "skill %q is broken: %s", res.Skill, msg)
		case nf != nil, errors.Is(err, run.ErrNoProgram):
			return httpError(http.StatusNotFound, "not_found", "%s", msg)
		}
		return httpError(http.StatusNotFound, "not_found", "no executable skill %q: %s", res.Skill, msg)
	case run.KindInvalidArgs:
		return httpError(http.StatusUnprocessableEntity, "invalid_args", "%s", msg)
	case run.KindQuotaExceeded:
		// A tenant's quota refuses a run before it starts, with a time to wait: 429. A store at
		// its quota fails a run that ran (its files could not be kept), and waiting does not
		// help: the store's status (quotaStatus).
		var re *run.Error
		if errors.As(err, &re) && re.RetryAfter > 0 {
			return &retryError{after: re.RetryAfter, err: httpError(http.StatusTooManyRequests, "quota_exceeded", "%s", msg)}
		}
		return httpError(quotaStatus, "quota_exceeded", "%s", msg)
	case run.KindPendingApproval:
		// The skill is there; its version waits for an admin: a conflict of state, not a miss.
		return httpError(http.StatusConflict, "pending_approval", "%s", msg)
	case run.KindBusy:
		if errors.Is(err, run.ErrClosed) {
			return httpError(http.StatusServiceUnavailable, "unavailable", "%s", msg)
		}
		retry := time.Second
		var re *run.Error
		if errors.As(err, &re) && re.RetryAfter > 0 {
			retry = re.RetryAfter
		}
		return &retryError{after: retry, err: httpError(http.StatusTooManyRequests, "busy", "%s", msg)}
	}
	return nil
}

// retryError is an HTTP error that asks the client to wait (Retry-After) before trying again.
type retryError struct {
	after time.Duration
	err   *echo.HTTPError
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }
func (e *retryError) retryAfter() string {
	return strconv.Itoa(max(1, int((e.after+time.Second-1)/time.Second)))
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

// opened reports whether the stream has started (an event was written, or tried).
func (w *sseWriter) opened() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.open || w.err != nil
}

func (w *sseWriter) event(e run.Event) { w.send(0, e.Type, e) }

// start sends the stream's header, if it is not sent yet. w.mu is held.
func (w *sseWriter) start() {
	if w.open {
		return
	}
	r := w.c.Response()
	r.Header().Set(echo.HeaderContentType, "text/event-stream")
	r.Header().Set("Cache-Control", "no-cache")
	r.Header().Set("X-Accel-Buffering", "no")
	r.WriteHeader(http.StatusOK)
	w.open = true
}

// sendRaw writes one event named name whose JSON data is data, with its "id:" line: an event
// another node encoded. One that would not be one event (a line break in its name or data,
// which encoded JSON never holds) is not sent.
func (w *sseWriter) sendRaw(id int, name string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || strings.ContainsAny(name, "\r\n") || bytes.ContainsAny(data, "\r\n") {
		return
	}
	data = linkRawEvent(apiPrefix(w.c), name, data)
	w.start()
	w.write(fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", id, name, data))
}

// send writes one event named name with payload as its JSON data line, and with an "id:" line
// when id is not 0; a comment (": keep-alive") when name is empty.
func (w *sseWriter) send(id int, name string, payload any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	w.start()
	var buf bytes.Buffer
	if name == "" {
		buf.WriteString(": keep-alive\n\n")
	} else {
		if e, ok := payload.(run.Event); ok {
			payload = linkEvent(apiPrefix(w.c), e)
		}
		data, err := json.Marshal(payload)
		if err != nil {
			w.err = err
			return
		}
		if id != 0 {
			fmt.Fprintf(&buf, "id: %d\n", id)
		}
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, data)
	}
	w.write(buf.Bytes())
}

// write sends b to the client. w.mu is held.
func (w *sseWriter) write(b []byte) {
	r := w.c.Response()
	// A client that stops reading must not hold the run (and its slot) forever: every write has
	// a deadline, and a failed write ends the stream (the run's context then ends with it).
	_ = http.NewResponseController(r.Writer).SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if _, err := r.Write(b); err != nil {
		w.err = err
		return
	}
	r.Flush()
}
