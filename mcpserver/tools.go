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
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/telemetry"
	"github.com/skillbox-dev/skillbox/run"
)

// Keys of the _meta of a tool result.
const (
	MetaRunID    = "skillbox/runId"
	MetaSkill    = "skillbox/skill"
	MetaVersion  = "skillbox/version"
	MetaDuration = "skillbox/durationMs"
	MetaKind     = "skillbox/errorKind"
)

// callToolset answers a call of the disclosure toolset's tool name with the text a model reads
// (toolset.Handle), or, when the call failed, with isError and "<kind>: <message>" as a skill's own
// tool does: one shape of failure for every tool of this face. A remote client is never handed a
// host path (toolset.Origin).
func (s *Server) callToolset(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.withAnswers(ctx, req, func(ctx context.Context, asker run.Asker) *mcp.CallToolResult {
			events := newNotifier(ctx, req)
			ctx = toolset.WithOrigin(ctx, toolset.Origin{Face: run.FaceMCP, Who: s.principal(ctx), Remote: s.opts.Remote, OnEvent: events.event, Asker: asker})
			res, text, err := toolset.HandleResult(traced(ctx, req), s.toolRunner, name, []byte(req.Params.Arguments))
			events.close() // every notification goes before the result
			if err != nil && res != nil && res.Error != nil {
				// As a skill's own tool fails: "<kind>: <message>", with the run's _meta.
				return failure(res, res.Error.Kind, res.Error.Message)
			}
			return withArtifacts(&mcp.CallToolResult{Meta: runMeta(res, ""), Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: err != nil}, res)
		}), nil
	}
}

// callTool returns the handler of the tool of skill id; out checks its results when the tool has
// an output schema.
func (s *Server) callTool(id string, out *resultSchema) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.withAnswers(ctx, req, func(ctx context.Context, asker run.Asker) *mcp.CallToolResult {
			return s.runTool(ctx, req, id, out, asker)
		}), nil
	}
}

// runTool runs skill id for req, asking a person through asker, and answers its result; out
// checks it when the tool has an output schema.
func (s *Server) runTool(ctx context.Context, req *mcp.CallToolRequest, id string, out *resultSchema, asker run.Asker) *mcp.CallToolResult {
	args := []byte(req.Params.Arguments) // none, or null, the runtime reads as {}
	events := newNotifier(ctx, req)
	res, err := s.runner.Run(traced(ctx, req), run.Request{Skill: id, Args: args, Face: run.FaceMCP, Who: s.principal(ctx), Asker: asker, OnEvent: func(e run.Event) {
		events.event(id, e)
	}})
	events.close() // every notification goes before the result
	if err != nil {
		kind, msg := run.KindInternal, err.Error()
		if res != nil && res.Error != nil {
			kind, msg = res.Error.Kind, res.Error.Message
		}
		return failure(res, kind, msg)
	}
	structured := res.Result
	if first := bytes.TrimLeft(structured, " \t\r\n"); len(first) == 0 || first[0] != '{' {
		// MCP clients of the 2025 revisions require an object: wrap anything else.
		structured, _ = json.Marshal(map[string]json.RawMessage{"result": orNull(res.Result)})
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, structured); err != nil {
		return failure(res, run.KindInternal, "the result is not valid JSON: "+err.Error())
	}
	if out != nil {
		if err := out.validate(compact.Bytes()); err != nil {
			// Sent as it is, the client would refuse the whole response; as a tool error the
			// model learns what went wrong.
			return failure(res, run.KindSkillError, "the result does not match the tool's output schema: "+err.Error())
		}
	}
	return withArtifacts(&mcp.CallToolResult{
		Meta:              runMeta(res, ""),
		Content:           []mcp.Content{&mcp.TextContent{Text: compact.String()}},
		StructuredContent: json.RawMessage(compact.Bytes()),
	}, res)
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
func failure(res *run.Result, kind run.ErrorKind, msg string) *mcp.CallToolResult {
	return withArtifacts(&mcp.CallToolResult{
		Meta:    runMeta(res, kind),
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: %s", kind, msg)}},
		IsError: true,
	}, res)
}

func runMeta(res *run.Result, kind run.ErrorKind) mcp.Meta {
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

// eventBuffer is how many events of a run may wait for the client before more are dropped: a
// run's log is bounded by its maxLogBytes anyway, and the guest must not wait on a slow client.
const eventBuffer = 1024

// maxProgressMessage bounds the log line a progress notification quotes, in bytes.
const maxProgressMessage = 200

// notifier sends a run's events to the client, in order, from a goroutine of its own, so the
// guest never waits on the client: log lines as notifications/message (at or above the level
// the client asked for), and, when the call carried a progressToken, every event as
// notifications/progress: "started", "running", then each log line, numbered 1, 2, 3, ...
// (how long a run will take is not known, so there is no total).
type notifier struct {
	mu     sync.Mutex
	closed bool
	ch     chan skillEvent
	done   chan struct{}
}

type skillEvent struct {
	skill string
	run.Event
}

func newNotifier(ctx context.Context, req *mcp.CallToolRequest) *notifier {
	n := &notifier{ch: make(chan skillEvent, eventBuffer), done: make(chan struct{})}
	ss := req.Session
	var token any
	if req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	go func() {
		defer close(n.done)
		var progress float64
		for e := range n.ch {
			if ss == nil || ctx.Err() != nil {
				continue // drain
			}
			// The errors are the client's going away, which the call's own reply will meet too.
			if e.Type == "log" {
				meta := mcp.Meta{MetaRunID: e.RunID}
				if e.Log.Source != "" {
					meta["skillbox/source"] = e.Log.Source
				}
				//lint:ignore SA1019 deprecated only from protocol 2026-07-28, and the clients of today use it
				_ = ss.Log(ctx, &mcp.LoggingMessageParams{Meta: meta, Level: mcpLevel(e.Log.Level), Logger: e.skill, Data: e.Log.Message})
			}
			if token != nil {
				progress++
				_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress,
					Message: progressMessage(e), Meta: mcp.Meta{MetaRunID: e.RunID}})
			}
		}
	}()
	return n
}

// progressMessage says what an event is in a line for a progress bar.
func progressMessage(e skillEvent) string {
	if e.Type != "log" {
		return e.skill + ": " + e.Status
	}
	msg := e.Log.Message
	if len(msg) > maxProgressMessage {
		cut := maxProgressMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return e.skill + ": " + msg
}

// event is a run's OnEvent: it queues status and log events (the result is the call's reply).
func (n *notifier) event(skill string, e run.Event) {
	if (e.Type != "log" || e.Log == nil) && e.Type != "status" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	select {
	case n.ch <- skillEvent{skill, e}:
	default: // the client is that far behind: the line stays in the run's own log only
	}
}

// close waits until every event queued so far has gone to the client; later ones are dropped.
func (n *notifier) close() {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.ch)
	}
	n.mu.Unlock()
	<-n.done
}

// mcpLevel maps a run log's level (debug, info, warn, error) to MCP's (RFC 5424's names).
//
//lint:ignore SA1019 see newNotifier
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

type principalKey struct{}

// WithPrincipal marks ctx (an HTTP request's, before it reaches Handler) with who makes its
// calls, as the face that authenticated the request knows them: its runs record the principal's
// caller, and the toolset's authoring tools (create_skill, update_skill, delete_skill) answer it
// only with the author role.
func WithPrincipal(ctx context.Context, p access.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// local is the principal of a local client (stdio): the operator, in their own shell.
var local = access.Local("local")

// principal is who makes the call in ctx: as WithPrincipal said; else, for a local client
// (stdio), the operator; else no one, who may run skills but not write them, and whose runs
// record no caller.
func (s *Server) principal(ctx context.Context) access.Principal {
	if p, ok := ctx.Value(principalKey{}).(access.Principal); ok {
		return p
	}
	if !s.opts.Remote {
		return local
	}
	return access.Principal{Role: access.RoleRunner}
}
