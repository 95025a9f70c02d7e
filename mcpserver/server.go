// Package mcpserver serves a Runtime's skills over the Model Context Protocol, with the official
// Go SDK (github.com/modelcontextprotocol/go-sdk):
//
//   - every active executable skill is a tool, named [tooldef.Name] of its id, with the input
//     schema the runtime validates against, the manifest's result schema as its output schema
//     when that is an object schema, and the annotations of [tooldef.MCP]. A call runs the
//     skill with the request's context (a client's cancellation cancels the run) and answers
//     with structuredContent plus the same JSON as text, or with isError and "<kind>: <message>";
//   - every skill with a SKILL.md has the resource skill://<id>/SKILL.md (the whole file,
//     frontmatter included, as text/markdown), and each file [skillmd.ListResources] finds is
//     skill://<id>/<path>; the template skill://{id}/{+path} reads any other file of a skill
//     that [skillmd.ReadResource] allows, and refuses the rest (a "..", a hidden file, a symlink
//     out of the skill);
//   - the MCP Skills extension ([SkillsExtension]) is declared, and skills/list and skills/get
//     list the skills that follow the Agent Skills specification, each with its frontmatter and
//     the sha256 digest and size of every file;
//   - every active instruction skill is a prompt named after its id, with an optional
//     "arguments" argument, rendered by [skillmd.Render];
//   - the progressive-disclosure toolset (list_skills, load_skill, read_skill_resource,
//     run_skill: [toolset.Tools]) is listed beside them by default ([Options.Offer]), so clients
//     that load only tools reach instruction skills; its runs are recorded as this face's;
//   - a run's log lines go to the client as notifications/message while the call runs (logger:
//     the skill id), at or above the level the client asked for (logging/setLevel, or the
//     request's _meta in the stateless revision; the SDK sends none before a client asks); a
//     call with a progressToken also gets notifications/progress for each status and log line;
//   - when the runtime's skills change (Reload, Install, Remove, Watch), the lists are synced and
//     the SDK sends notifications/tools/list_changed (and the resources and prompts ones).
//
// [Server.RunStdio] serves one client over a pair of streams (skillbox mcp); [Handler] and
// [Server.Handler] serve any number over streamable HTTP, in the stateless 2026-07-28 revision
// to clients that speak it and with sessions to older ones.
package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
)

// Options configure a Server. The zero value is valid.
type Options struct {
	// Logger receives the server's own log and the SDK's; nil discards it. For stdio, it must not
	// write to the protocol's stream.
	Logger *slog.Logger
	// Name and Version are the server info sent to clients: "skillbox" and the module's version
	// (or "(devel)") by default.
	Name    string
	Version string
	// PollInterval is how often the runtime's Generation is checked for changes to sync the lists
	// (default 1s; negative: never, call [Server.Refresh] instead). Polling runs only while a
	// client is connected; every request from a client checks it too.
	PollInterval time.Duration
	// Remote says the clients are not on this host (the streamable HTTP endpoint of a server):
	// a prompt's base directory is then the skill's skill:// URI, never the host's path. A local
	// client (stdio) gets the directory, which its own tools can read.
	Remote bool
	// Offer says which tools are listed: a tool per executable skill and the disclosure
	// toolset (list_skills, load_skill, read_skill_resource, run_skill) by default, through which
	// clients that load only tools reach instruction skills; see [toolset.Offer].
	Offer toolset.Offer
	// ToolNames says by which names the skill-management tools are offered: Skillbox's (the
	// default) or Devai's (skill_create, ..., skill_list; see toolset.WithDevaiNames).
	ToolNames toolset.Naming
	// SessionTimeout closes a streamable HTTP session that has made no request for this long
	// (default 30 minutes; negative: never).
	SessionTimeout time.Duration
	// Run, when set, makes the runs of tool calls (a skill's own tool, run_skill, run_script)
	// in place of the runtime's Run, with the same contract: a server that is a node of a
	// cluster passes one that sends a run this node has no room for to the cluster's queue.
	Run func(ctx context.Context, req run.Request) (*run.Result, error)
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Name == "" {
		o.Name = "skillbox"
	}
	if o.Version == "" {
		o.Version = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			o.Version = bi.Main.Version
		}
	}
	if o.Offer == "" {
		o.Offer = toolset.OfferAll
	}
	if o.PollInterval == 0 {
		o.PollInterval = time.Second
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = 30 * time.Minute
	}
	return o
}

// instructions are the server's instructions to clients (InitializeResult.instructions).
const instructions = `Skillbox runs skills in WebAssembly sandboxes. Each tool runs one skill; its arguments are validated against the tool's input schema before the skill runs, and a failed run says why as "<kind>: <message>" (kinds: invalid_args, permission_denied, timeout, ...). A skill with instructions has the resource skill://<id>/SKILL.md: read it before using the skill. Its other files are skill://<id>/<path>. Instruction-only skills are also prompts named after their id.`

// Server is an MCP server over one Runtime. It is safe for concurrent use, and serves any number
// of sessions at once.
type Server struct {
	rt *runtime.Runtime
	// runner makes the runs of tool calls: rt, or rt with Options.Run in place of its Run.
	runner toolset.Author
	// toolRunner is runner as the toolset's tools are listed and called over it (with Devai's
	// names, when Options.DevaiNames).
	toolRunner toolset.Runner
	opts       Options
	logger     *slog.Logger
	mcp        *mcp.Server

	// publisher reads the skills the Skills extension lists, remembering their files' digests;
	// unpublished remembers which were left out, so each is logged once.
	publisher   skillmd.Publisher
	unpublished unpublished
	skillsSlots chan struct{} // see maxSkillsAnswers
	// parking holds the runs that wait for a stateless client's next call (mrtr.go).
	parking parking

	syncMu sync.Mutex
	synced bool
	gen    uint64
	// The definitions last registered, by tool name, resource URI and prompt name, as JSON: a
	// sync adds what is new or changed and removes what is gone, so an unchanged reload sends no
	// list_changed.
	tools, resources, prompts map[string]string

	pollMu  sync.Mutex
	polling bool
	closed  bool
	stop    chan struct{}
}

// New returns a Server serving rt's skills as they are now, and as they change.
func New(rt *runtime.Runtime, opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{
		rt: rt, opts: opts, logger: opts.Logger,
		tools: map[string]string{}, resources: map[string]string{}, prompts: map[string]string{},
		stop: make(chan struct{}), skillsSlots: make(chan struct{}, maxSkillsAnswers),
	}
	s.runner = rt
	if opts.Run != nil {
		s.runner = runWith{rt, opts.Run}
	}
	s.toolRunner = opts.ToolNames.Over(s.runner)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: "Skillbox", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		Capabilities: capabilities(),
	})
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "skill-file",
		Title:       "A file of a skill",
		Description: "Any file of a skill's package, by its path relative to the skill's directory (hidden files and paths leading out of it are refused). skill://<id>/SKILL.md is its instructions, frontmatter included.",
		URITemplate: uriScheme + "{id}/{+path}",
	}, s.readResource)
	s.mcp.AddReceivingMiddleware(s.onRequest)
	// No sync yet: registering ten thousand tools costs the SDK hundreds of megabytes of
	// short-lived garbage, which a server whose MCP endpoint no one calls should not pay at
	// start. The first sync happens before the first client connects (MCP, RunStdio, Handler),
	// so that no client is told of a change for what was there all along.
	return s
}

// capabilities are the server's: advertised even while there is nothing to list, so a client that
// connects before the first skill is installed still learns of it. The Skills extension rides on
// resources, which are declared with it, as it requires.
func capabilities() *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true},
		Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		//lint:ignore SA1019 run logs are log notifications; MCP deprecates them only from 2026-07-28
		Logging: &mcp.LoggingCapabilities{},
	}
	c.AddExtension(SkillsExtension, nil)
	return c
}

// MCP returns the SDK's server, synced, to connect other transports (mcp.Server.Connect, through
// [Server.Transport] so that the Skills extension it declares is answered) or add middleware.
// Tools, resources and prompts added to it directly may be removed by a sync.
func (s *Server) MCP() *mcp.Server {
	s.Refresh()
	return s.mcp
}

// RunStdio serves one client over in (its requests) and out (the server's messages, and nothing
// else may write to it), until the client closes in (nil, or the session's error) or ctx ends
// (ctx's error). Both are how a client shuts a stdio server down, first one then, if it is slow,
// the other (SIGTERM): neither is logged as an error. The SDK's own Server.Run logs an error
// for ctx's end, which every client's clean shutdown would print on stderr.
func (s *Server) RunStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	s.Refresh()
	s.ensurePolling()
	ss, err := s.mcp.Connect(ctx, s.Transport(&stdioTransport{in: rc, out: nopCloser{out}, logger: s.logger,
		maxLine: func() int { return int(s.MaxMessageBytes()) }}), nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
		ss.Close()
		<-ended
		s.logger.Debug("stdio session closed: the program is stopping", "cause", context.Cause(ctx))
		return ctx.Err()
	}
}

// Handler returns the streamable HTTP handler of s (the MCP endpoint, to mount at a path such as
// /mcp). It protects a loopback listener from DNS rebinding (a non-loopback Host header is
// refused) and does no authentication of its own.
//
// It speaks both generations of the protocol. A request of 2026-07-28 or later (its
// Mcp-Protocol-Version header says so) is served statelessly, as that revision defines: no
// handshake, no session, each POST whole in itself, list changes over subscriptions/listen. The
// SDK refuses those requests on a handler with sessions. Older clients (2025-11-25 and before)
// keep the sessions their revision defines: initialize, Mcp-Session-Id, the GET stream for
// notifications, logging/setLevel that lasts.
func (s *Server) Handler() http.Handler {
	timeout := s.opts.SessionTimeout
	if timeout < 0 {
		timeout = 0
	}
	server := func(*http.Request) *mcp.Server { return s.MCP() }
	// Each answers the Skills extension's requests itself, before the SDK, which refuses them.
	// The SDK's own bound on a body (4 MiB) is off: each request is read within the runtime's
	// bound on arguments instead (see below), which the policy sets and a reload changes.
	sessions := s.skillsHTTP(mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Logger: s.logger, SessionTimeout: timeout,
		MaxRequestBodyBytes: -1}), false)
	stateless := s.skillsHTTP(mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Logger: s.logger, Stateless: true,
		// A client that goes away cancels its call (and the run): nothing could receive the result.
		PropagateRequestCancellation: true, MaxRequestBodyBytes: -1}), true)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			// The SDK answers a *http.MaxBytesError with 413.
			r.Body = http.MaxBytesReader(w, r.Body, s.MaxMessageBytes())
		}
		if statelessProtocol(r.Header.Get("Mcp-Protocol-Version")) {
			stateless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
}

// firstStatelessProtocol is the first revision of MCP without sessions or an initialize
// handshake: one constant for every check of a request's revision (the handler's choice of
// SDK handler, and the Skills extension's answers).
const firstStatelessProtocol = "2026-07-28"

// statelessProtocol reports whether v, an Mcp-Protocol-Version or the _meta's protocolVersion
// (YYYY-MM-DD, which sort as strings), is a revision without sessions.
func statelessProtocol(v string) bool {
	return len(v) == len(firstStatelessProtocol) && v >= firstStatelessProtocol
}

// Handler is New(rt, opts).Handler().
func Handler(rt *runtime.Runtime, opts Options) http.Handler {
	return New(rt, opts).Handler()
}

// Close stops polling for changes. Sessions are the transports' to end.
func (s *Server) Close() {
	s.pollMu.Lock()
	defer s.pollMu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
}

// onRequest is the receiving middleware: every message from a client first syncs the lists if
// the skills changed, so a client never sees a list older than its request, and (re)starts the
// poll that notifies clients of changes between requests.
func (s *Server) onRequest(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		s.Refresh()
		s.ensurePolling()
		res, err := next(ctx, method, req)
		if l, ok := res.(*mcp.ListToolsResult); ok && err == nil && !toolset.MayAuthor(s.principal(ctx)) {
			// The tools are registered once for every session; whether the caller is offered the
			// ones that write skills is decided where every face decides it. A copy: the SDK's
			// result is not this caller's to change.
			out := *l
			out.Tools = make([]*mcp.Tool, 0, len(l.Tools))
			for _, t := range l.Tools {
				if !toolset.IsAuthoring(t.Name) {
					out.Tools = append(out.Tools, t)
				}
			}
			res = &out
		}
		return res, err
	}
}

// ensurePolling starts the poll unless it runs already, polling is off, or s is closed.
func (s *Server) ensurePolling() {
	if s.opts.PollInterval < 0 {
		return
	}
	s.pollMu.Lock()
	defer s.pollMu.Unlock()
	if s.polling || s.closed {
		return
	}
	s.polling = true
	go s.poll()
}

// poll syncs every PollInterval while there are sessions to notify, and ends with the last one
// (a later request starts it again).
func (s *Server) poll() {
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
		case <-t.C:
			s.Refresh()
			if s.hasSessions() {
				continue
			}
		}
		s.pollMu.Lock()
		// A session that connected meanwhile found polling still true; look once more under the
		// lock so it is not left without a poll.
		if !s.closed && s.hasSessions() {
			s.pollMu.Unlock()
			continue
		}
		s.polling = false
		s.pollMu.Unlock()
		return
	}
}

func (s *Server) hasSessions() bool {
	for range s.mcp.Sessions() {
		return true
	}
	return false
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// runWith is a runtime whose runs Options.Run makes; everything else is the runtime's.
type runWith struct {
	*runtime.Runtime
	run func(ctx context.Context, req run.Request) (*run.Result, error)
}

func (r runWith) Run(ctx context.Context, req run.Request) (*run.Result, error) {
	return r.run(ctx, req)
}
