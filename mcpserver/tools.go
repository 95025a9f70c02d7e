package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillbox-dev/skillbox/agent"
	"github.com/skillbox-dev/skillbox/internal/telemetry"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Keys of the _meta of a tool result.
const (
	MetaRunID    = "skillbox/runId"
	MetaSkill    = "skillbox/skill"
	MetaVersion  = "skillbox/version"
	MetaDuration = "skillbox/durationMs"
	MetaKind     = "skillbox/errorKind"
)

// callTool returns the handler of the tool of skill id; out checks its results when the tool has
// an output schema.
// callToolset answers a call of the disclosure toolset's tool name with the text a model reads
// (agent.Handle), marked as an error when the call failed. A remote client is never handed a
// host path (agent.Remote).
func (s *Server) callToolset(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if s.opts.Remote {
			ctx = agent.Remote(ctx)
		}
		text, err := agent.Handle(traced(ctx, req), s.rt, name, []byte(req.Params.Arguments))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: err != nil}, nil
	}
}

func (s *Server) callTool(id string, out *resultSchema) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := []byte(req.Params.Arguments)
		if t := bytes.TrimSpace(args); bytes.Equal(t, []byte("null")) {
			args = nil // no arguments: the runtime reads that as {}
		}
		logs := newLogForwarder(ctx, req.Session, id)
		res, err := s.rt.Run(traced(ctx, req), runtime.Request{Skill: id, Args: args, Face: runtime.FaceMCP, OnEvent: func(e runtime.Event) {
			if e.Type == "log" && e.Log != nil {
				logs.send(e.RunID, *e.Log)
			}
		}})
		logs.close() // every log notification goes before the result
		if err != nil {
			kind, msg := runtime.KindInternal, err.Error()
			if res != nil && res.Error != nil {
				kind, msg = res.Error.Kind, res.Error.Message
			}
			return failure(res, kind, msg), nil
		}
		structured := res.Result
		if first := bytes.TrimLeft(structured, " \t\r\n"); len(first) == 0 || first[0] != '{' {
			// MCP clients of the 2025 revisions require an object: wrap anything else.
			structured, _ = json.Marshal(map[string]json.RawMessage{"result": orNull(res.Result)})
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, structured); err != nil {
			return failure(res, runtime.KindInternal, "the result is not valid JSON: "+err.Error()), nil
		}
		if out != nil {
			if err := out.validate(compact.Bytes()); err != nil {
				// Sent as it is, the client would refuse the whole response; as a tool error the
				// model learns what went wrong.
				return failure(res, runtime.KindSkillError, "the result does not match the tool's output schema: "+err.Error()), nil
			}
		}
		return &mcp.CallToolResult{
			Meta:              runMeta(res, ""),
			Content:           []mcp.Content{&mcp.TextContent{Text: compact.String()}},
			StructuredContent: json.RawMessage(compact.Bytes()),
		}, nil
	}
}

// traced returns ctx carrying the caller's trace context, for the run's span to continue: the
// HTTP request's headers (streamable HTTP), then the call's _meta (traceparent, tracestate,
// baggage), which wins: it names the caller of this call whatever the transport.
func traced(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req.Extra != nil && req.Extra.Header != nil {
		ctx = telemetry.FromHTTP(ctx, req.Extra.Header)
	}
	if req.Params != nil {
		ctx = telemetry.FromMeta(ctx, req.Params.Meta)
	}
	return ctx
}

// failure is the tool error of a failed run: isError, and "<kind>: <message>" as its text.
func failure(res *runtime.Result, kind runtime.ErrorKind, msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Meta:    runMeta(res, kind),
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: %s", kind, msg)}},
		IsError: true,
	}
}

func runMeta(res *runtime.Result, kind runtime.ErrorKind) mcp.Meta {
	if res == nil {
		return nil
	}
	m := mcp.Meta{MetaSkill: res.Skill}
	if res.RunID != "" {
		m[MetaRunID] = res.RunID
		m[MetaDuration] = res.DurationMs
	}
	if res.Version != "" {
		m[MetaVersion] = res.Version
	}
	if kind != "" {
		m[MetaKind] = string(kind)
	}
	return m
}

func orNull(v json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// logBuffer is how many log lines may wait for the client before more are dropped: a run's log
// is bounded by its maxLogBytes anyway, and the guest must not wait on a slow client.
const logBuffer = 1024

// logForwarder sends a run's log lines to the client as notifications/message, in order, from a
// goroutine of its own, so the guest never waits on the client.
type logForwarder struct {
	mu     sync.Mutex
	closed bool
	ch     chan logLine
	done   chan struct{}
}

type logLine struct {
	runID string
	entry runtime.LogEntry
}

func newLogForwarder(ctx context.Context, ss *mcp.ServerSession, skill string) *logForwarder {
	f := &logForwarder{ch: make(chan logLine, logBuffer), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for l := range f.ch {
			if ss == nil || ctx.Err() != nil {
				continue // drain
			}
			meta := mcp.Meta{MetaRunID: l.runID}
			if l.entry.Source != "" {
				meta["skillbox/source"] = l.entry.Source
			}
			// The error is the client's going away, which the call's own reply will meet too.
			//lint:ignore SA1019 deprecated only from protocol 2026-07-28, and the clients of today use it
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{
				Meta:   meta,
				Level:  mcpLevel(l.entry.Level),
				Logger: skill,
				Data:   l.entry.Message,
			})
		}
	}()
	return f
}

func (f *logForwarder) send(runID string, e runtime.LogEntry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	select {
	case f.ch <- logLine{runID, e}:
	default: // the client is that far behind: the line stays in the run's own log only
	}
}

// close waits until every line sent so far has gone to the client; later ones are dropped.
func (f *logForwarder) close() {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.ch)
	}
	f.mu.Unlock()
	<-f.done
}

// mcpLevel maps a run log's level (debug, info, warn, error) to MCP's (RFC 5424's names).
//
//lint:ignore SA1019 see newLogForwarder
func mcpLevel(level string) mcp.LoggingLevel {
	switch strings.ToLower(level) {
	case "debug", "trace":
		return "debug"
	case "warn", "warning":
		return "warning"
	case "error":
		return "error"
	}
	return "info"
}

// resultSchema is a manifest's result schema, compiled to check results before they are sent as
// structuredContent (MCP requires them to conform).
type resultSchema struct{ schema *jsonschema.Schema }

// errNoRefs refuses every $ref to another document: a manifest must not make the host read files
// or the network.
var errNoRefs = errors.New("result schemas may not load external references")

type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) { return nil, fmt.Errorf("%s: %w", url, errNoRefs) }

func compileResultSchema(raw json.RawMessage) (*resultSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem:///skill/result.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	return &resultSchema{sch}, nil
}

func (r *resultSchema) validate(value []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return err
	}
	if err := r.schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		var lines []string
		for _, u := range ve.BasicOutput().Errors {
			if u.Error == nil || strings.HasPrefix(u.Error.String(), "validation failed") {
				continue
			}
			where := "the result"
			if u.InstanceLocation != "" {
				where = fmt.Sprintf("%q", u.InstanceLocation)
			}
			lines = append(lines, where+": "+u.Error.String())
		}
		if len(lines) == 0 {
			return err
		}
		slices.Sort(lines)
		return errors.New(strings.Join(slices.Compact(lines), "; "))
	}
	return nil
}
