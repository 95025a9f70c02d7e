package broker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// DefaultTimeout bounds one operation when Broker.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Broker answers the SkillContext requests of one run. It is not safe for concurrent use: a
// guest makes one request at a time.
type Broker struct {
	Host Host
	// Timeout bounds each operation (DefaultTimeout when zero), inside the run's deadline.
	Timeout time.Duration
	// Calls counts the requests served.
	Calls int
}

// Request is one SkillContext operation, as a guest sends it.
type Request struct {
	Op      string            `json:"op"`      // fetch, env, readFile, writeFile, log, run
	Name    string            `json:"name"`    // env
	Path    string            `json:"path"`    // readFile, writeFile
	Bytes   bool              `json:"bytes"`   // readFile: answer base64
	Data    *string           `json:"data"`    // writeFile: text
	Data64  *string           `json:"data64"`  // writeFile: bytes, base64
	URL     string            `json:"url"`     // fetch
	Method  string            `json:"method"`  // fetch
	Headers map[string]string `json:"headers"` // fetch
	Body    *string           `json:"body"`    // fetch
	Level   string            `json:"level"`   // log
	Message string            `json:"message"` // log
	Source  string            `json:"source"`  // log: "ctx" (default) or "console"
	// run: another program of the skill (see Runner). Path is its file in the guest, Module its
	// name when run as python -m; Stdin is base64.
	Module    string   `json:"module"`
	Argv      []string `json:"argv"`
	Cwd       string   `json:"cwd"`
	Stdin     string   `json:"stdin"`
	Merge     bool     `json:"merge"`
	TimeoutMs int64    `json:"timeout_ms"`
}

// Reply is the answer to one request: Value, or Error with the Status that names it to the
// guest ("denied", "not_found", "invalid", "limit", "timeout", "failed").
type Reply struct {
	Value  any    `json:"value"`
	Error  string `json:"error,omitempty"`
	Status string `json:"status,omitempty"`
}

// FetchReply is a fetch's Value.
type FetchReply struct {
	Status  int               `json:"status"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// errHostTimeout is a host operation that did not answer within its timeout.
var errHostTimeout = errors.New("the host did not answer in time")

func (b *Broker) timeout() time.Duration {
	if b.Timeout <= 0 {
		return DefaultTimeout
	}
	return b.Timeout
}

// ServeJSON decodes one request, answers it and encodes the reply. It never fails: a request it
// cannot decode is answered with an "invalid" reply.
func (b *Broker) ServeJSON(ctx context.Context, req []byte) []byte {
	out, err := json.Marshal(b.Serve(ctx, req))
	if err != nil {
		return []byte(`{"error":"the host could not encode its answer","status":"failed"}`)
	}
	return out
}

// TooLarge is the reply to a request longer than the guest's channel allows.
func TooLarge(max int) []byte {
	return fmt.Appendf(nil, `{"error":"request larger than %d bytes","status":"limit"}`, max)
}

// Serve decodes one request and answers it.
func (b *Broker) Serve(ctx context.Context, line []byte) Reply {
	b.Calls++
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return Reply{Error: "malformed request: " + err.Error(), Status: "invalid"}
	}
	v, err := b.call(ctx, req)
	if err == nil {
		return Reply{Value: v}
	}
	if errors.Is(err, errHostTimeout) {
		return Reply{Error: fmt.Sprintf("%s: %v (%s)", req.Op, err, b.timeout()), Status: "timeout"}
	}
	st, msg := hostfuncs.StatusOf(err)
	if st == hostfuncs.StatusNotFound && req.Op == "env" {
		return Reply{} // null: an absent variable is not an error
	}
	return Reply{Error: msg, Status: st.String()}
}

// call runs one operation on the host in its own goroutine, so that a host method that ignores
// its context cannot hold the guest past the operation's timeout.
func (b *Broker) call(ctx context.Context, req Request) (any, error) {
	switch req.Op {
	case "log":
		return nil, b.log(req) // never blocks: no goroutine
	case "env":
		return b.Host.Env(ctx, req.Name) // a lookup in the grant: never blocks either
	case "run":
		return b.run(ctx, req) // bounded by the run's deadline, not an operation's timeout
	}
	// A person asked for what the operation needs beyond the grant answers before the
	// operation's own time starts: their wait is bounded by the policy's ask timeout and the run.
	if p, ok := b.Host.(Permitter); ok {
		target := req.Path
		if req.Op == "fetch" {
			target = req.URL
		}
		p.Permit(ctx, req.Op, target)
	}
	cctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	type answer struct {
		v   any
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- answer{err: fmt.Errorf("host %s failed: %v", req.Op, p)}
			}
		}()
		v, err := b.op(cctx, req)
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-cctx.Done():
		return nil, errHostTimeout
	}
}

// op performs req on the host.
func (b *Broker) op(ctx context.Context, req Request) (any, error) {
	switch req.Op {
	case "env":
		return b.Host.Env(ctx, req.Name)
	case "readFile":
		data, err := b.Host.ReadFile(ctx, req.Path)
		if err != nil {
			return nil, err
		}
		if req.Bytes {
			return base64.StdEncoding.EncodeToString(data), nil
		}
		return string(data), nil
	case "writeFile":
		var data []byte
		switch {
		case req.Data != nil:
			data = []byte(*req.Data)
		case req.Data64 != nil:
			d, err := base64.StdEncoding.DecodeString(*req.Data64)
			if err != nil {
				return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: "writeFile: data is not valid base64"}
			}
			data = d
		default:
			return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: "writeFile: data must be text or bytes"}
		}
		return nil, b.Host.WriteFile(ctx, req.Path, data)
	case "fetch":
		fr := hostfuncs.FetchRequest{Method: req.Method, URL: req.URL, Headers: req.Headers}
		if req.Body != nil {
			fr.Body = []byte(*req.Body)
		}
		resp, err := b.Host.Fetch(ctx, fr)
		if err != nil {
			return nil, err
		}
		return FetchReply{Status: resp.Status, URL: resp.URL, Headers: resp.Headers, Body: string(resp.Body)}, nil
	}
	return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: fmt.Sprintf("unknown operation %q", req.Op)}
}

// log passes ctx.log and console output to the host.
func (b *Broker) log(req Request) error {
	switch req.Level {
	case "":
		req.Level = "info"
	case "debug", "info", "warn", "error":
	default:
		return &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid,
			Message: fmt.Sprintf("log level %q: use debug, info, warn or error", req.Level)}
	}
	src := "ctx"
	if req.Source == "console" {
		src = "console"
	}
	if !utf8.ValidString(req.Message) {
		req.Message = string(bytes.ToValidUTF8([]byte(req.Message), []byte("\uFFFD")))
	}
	b.Host.Log(req.Level, src, req.Message)
	return nil
}
