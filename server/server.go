package server

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Options configure a Server. Zero values are the documented defaults.
type Options struct {
	// Keys are the API keys. None means no authentication: everyone is an admin, which is only
	// safe on loopback (skillbox serve refuses other addresses without --insecure).
	Keys []APIKey
	// Logger receives access logs and errors; nil discards them. Keys are never logged.
	Logger *slog.Logger
	// MaxPackageBytes bounds an uploaded skill package (default 64 MiB).
	MaxPackageBytes int64
	// Provider names this server in /.well-known/skills.json (default "skillbox").
	Provider string
	// CORSOrigins are the web origins (scheme://host[:port], matched exactly) whose pages may
	// call this API from a browser: their CORS preflights are answered and their requests pass
	// the cross-site check. None, the default, means no page on another origin may run or change
	// anything. New refuses "*", "null" and anything with a path.
	CORSOrigins []string
	// Tenants are the tenants this server serves besides the default one (rt): each its own
	// Runtime (on one runtime.Shared with the others, normally) and run history, by name. An API
	// key of a tenant (APIKey.Tenant) sees that tenant's skills, runs, versions, tools and MCP
	// endpoint, and nothing of any other; a key without a tenant is the default tenant's.
	Tenants map[string]Tenant
	// History is the run history GET /v1/runs lists and GET /v1/runs/{id} reads (a store.Store
	// is one; the runtime's Config.Recorder writes it). Nil: GET /v1/runs answers 501, and
	// GET /v1/runs/{id} the runtime's records of its most recent runs.
	History History
	// LiveRuns bounds the runs this server holds as resources: asynchronous runs
	// (POST ...runs?async=true), their events (GET /v1/runs/{id}/events) and cancellation
	// (POST /v1/runs/{id}/cancel). These live in this process's memory: with several replicas,
	// a run is watched and canceled through the replica that runs it, unless they are nodes of
	// a Cluster.
	LiveRuns LiveRunOptions
	// Offer says which tools GET /v1/tools and the MCP endpoint list by default: a tool per
	// executable skill and the progressive-disclosure toolset ([toolset.OfferAll], the default),
	// one of them, or the other. GET /v1/tools?tools= picks per request.
	Offer toolset.Offer
	// ToolNames says by which names GET /v1/tools, POST /v1/tools/call and the MCP endpoint
	// offer the skill-management tools: Skillbox's (the default) or Devai's (skill_create, ...,
	// skill_list; see toolset.WithDevaiNames).
	ToolNames toolset.Naming
	// BodyTimeout is the longest a request's body may take to arrive (default 2 minutes), and
	// MinBodyRate the fewest bytes a second it must average after its first 5 seconds (default
	// 1 KiB/s; negative: no rate). A body that falls behind is answered 408 and its connection
	// closed; an answer given before a body was read closes its connection rather than read the
	// rest. Neither bounds what follows the body: a run streams for as long as its own timeout
	// allows. They apply to Handler; a program that mounts the routes in its own server bounds
	// its connections itself.
	BodyTimeout time.Duration
	MinBodyRate int64
	// Cluster, when set, is this server's node of a cluster: the runs it holds share their events
	// and answer cancels through it, so that any node serves GET /v1/runs/{id}/events and POST
	// /v1/runs/{id}/cancel for any run; GET /v1/cluster answers its status to the operator's
	// admin keys. Nil: a server on its own, which answers 404 not_clustered.
	Cluster Cluster
	// Console, when set, is served at /console/ (and /console redirects there): the operator
	// console's files, which the handler gets with the path below /console (console.Handler
	// is one). They are public: a page and its script carry no secret, and the API calls they
	// make carry the key. Without keys they answer, like the API, only a loopback Host. Nil,
	// the default: no console. The server does not import the console, so a program that
	// mounts the API alone does not link it.
	Console http.Handler
}

func (o Options) withDefaults() Options {
	if o.MaxPackageBytes == 0 {
		o.MaxPackageBytes = 64 << 20
	}
	if o.Provider == "" {
		o.Provider = "skillbox"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Offer == "" {
		o.Offer = toolset.OfferAll
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 2 * time.Minute
	}
	switch {
	case o.MinBodyRate == 0:
		o.MinBodyRate = 1 << 10
	case o.MinBodyRate < 0:
		o.MinBodyRate = 0
	}
	return o
}

// Server serves a default tenant's Runtime, and the tenants' of Options.Tenants, over HTTP. It
// is one Server for all of them: each request's principal is routed to its view (view.go), the
// tenant of its key and, for a user with skills of their own, the user's view of it.
type Server struct {
	opts    Options
	logger  *slog.Logger
	keys    []keyEntry
	version string
	browser *browserGuard
	// def is the default tenant (the Runtime New was given); tenants are Options.Tenants, by
	// name: a key of a tenant is served by its tenant alone.
	def     *tenant
	tenants map[string]*tenant
}

// New checks opts and builds a Server. It fails on a bad configuration, never at request time.
func New(rt *runtime.Runtime, opts Options) (*Server, error) {
	if rt == nil {
		return nil, errors.New("server: nil runtime")
	}
	opts = opts.withDefaults()
	if opts.MaxPackageBytes < 0 {
		return nil, errors.New("server: limits must not be negative")
	}
	if _, err := toolset.ParseOffer(string(opts.Offer)); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if _, err := opts.LiveRuns.withDefaults(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, logger: opts.Logger, version: "(devel)"}
	s.def = s.newTenant("", rt, opts.History, opts.Logger)
	browser, err := newBrowserGuard(opts.CORSOrigins)
	if err != nil {
		return nil, err
	}
	s.browser = browser
	seen := map[[32]byte]bool{}
	for i, k := range opts.Keys {
		if strings.TrimSpace(k.Name) == "" {
			// A nameless key would be a caller with no name, which no record could name.
			return nil, fmt.Errorf("server: key %d has no name: give every key a name (runs, versions and approvals record it as who asked)", i)
		}
		if !k.Role.Valid() {
			return nil, errors.New("server: key " + k.Name + " has no valid role")
		}
		if len(k.Key) < 16 {
			return nil, errors.New("server: key " + k.Name + " is shorter than 16 characters")
		}
		h := sha256.Sum256([]byte(k.Key))
		if seen[h] {
			return nil, errors.New("server: key " + k.Name + " is listed twice")
		}
		seen[h] = true
		if _, ok := opts.Tenants[k.Tenant]; k.Tenant != "" && !ok {
			return nil, fmt.Errorf("server: key %s belongs to tenant %q, which is not one of the server's tenants", k.Name, k.Tenant)
		}
		s.keys = append(s.keys, keyEntry{Principal: access.Principal{Key: k.Name, Role: k.Role, Tenant: k.Tenant, User: k.User}, hash: h})
	}
	if err := s.addTenants(); err != nil {
		return nil, err
	}
	if opts.Cluster != nil {
		if err := opts.Cluster.ServeCancels(s.heldCancel); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		if err := opts.Cluster.ServeAnswers(s.heldAnswer); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		if err := opts.Cluster.ServePermissionRequests(s.waitingHere); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		// The node takes a queued run only when its admission has a free slot and nobody
		// waits for one here: a node pulls only what it can admit.
		free := func() bool { a := rt.AdmissionStats(); return a.Running < a.MaxRuns && a.Queued == 0 }
		if err := opts.Cluster.ServeRuns(free, s.runQueued); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		s.version = bi.Main.Version
	}
	return s, nil
}

// Mount registers every route on g (its prefix is the API's prefix). Middleware is attached per
// route, not with g.Use: a group's Use makes echo add catch-all routes that turn a wrong method
// (405) into a 404, and would put the probes behind authentication.
//
// Every route refuses cross-site requests that change state (see browser.go); every route but
// the three public probes refuses a non-loopback Host when there are no keys. The probes answer
// anyone even with keys, and an orchestrator probes a container by its address.
func (s *Server) Mount(g *echo.Group) {
	common := []echo.MiddlewareFunc{middleware.RequestID(), s.accessLog, s.jsonErrors, middleware.Recover()}
	if s.browser.cors != nil {
		common = append(common, s.browser.cors)
	}
	common = append(common, s.refuseCrossSite)
	paths := map[string]bool{}
	public := func(method, path string, h echo.HandlerFunc) {
		g.Add(method, path, h, common...)
		paths[path] = true
	}
	guarded := func(method, path string, h echo.HandlerFunc, role access.Role) {
		mw := append(append([]echo.MiddlewareFunc{}, common...), s.loopbackHost, s.authenticate, require(role))
		g.Add(method, path, h, mw...)
		paths[path] = true
	}
	public(http.MethodGet, "/healthz", s.healthz)
	public(http.MethodHead, "/healthz", s.healthz)
	public(http.MethodGet, "/readyz", s.readyz)
	public(http.MethodGet, "/openapi.json", s.openapi)
	if s.opts.Console != nil {
		s.mountConsole(g, append(append([]echo.MiddlewareFunc{}, common...), s.loopbackHost))
	}
	guarded(http.MethodGet, "/metrics", s.each((*view).metricsHandler), access.RoleViewer)
	guarded(http.MethodGet, "/v1/me", s.me, access.RoleViewer)

	// The JSON endpoints take only JSON (requireJSON); the uploads take multipart or .tar.gz and
	// DELETE and reload take no body: the cross-site check is their defence.
	guarded(http.MethodGet, "/v1/skills", s.each((*view).listSkills), access.RoleViewer)
	guarded(http.MethodPost, "/v1/skills/search", requireJSON(s.each((*view).search)), access.RoleViewer)
	guarded(http.MethodGet, "/v1/skills/:id", s.each((*view).getSkill), access.RoleViewer)
	guarded(http.MethodGet, "/v1/skills/:id/instructions", s.each((*view).instructions), access.RoleViewer)
	guarded(http.MethodGet, "/v1/skills/:id/resources/*", s.each((*view).resource), access.RoleViewer)
	// The runtime checks a run's role (access.NeedRun); the routes check it first, before a body.
	guarded(http.MethodPost, "/v1/skills/:id/runs", requireJSON(s.each((*view).runSkill)), access.NeedRun)
	guarded(http.MethodPost, "/v1/runs", requireJSON(s.each((*view).runAny)), access.NeedRun)
	guarded(http.MethodPost, "/v1/skills/:id/scripts/:script/runs", requireJSON(s.each((*view).runScript)), access.NeedRun)
	guarded(http.MethodGet, "/v1/runs", s.each((*view).listRuns), access.RoleViewer)
	guarded(http.MethodGet, "/v1/runs/:run_id", s.each((*view).getRun), access.RoleViewer)
	guarded(http.MethodGet, "/v1/runs/:run_id/artifacts/*", s.each((*view).artifact), access.RoleViewer)
	guarded(http.MethodGet, "/v1/runs/:run_id/events", s.each((*view).runEvents), access.RoleViewer)
	// Only the key that started a run, or an admin, may cancel it (cancelRun checks).
	guarded(http.MethodPost, "/v1/runs/:run_id/cancel", s.each((*view).cancelRun), access.RoleRunner)
	// The runtime decides who may answer a permission request (an admin; the run's caller when
	// the policy says so); a viewer never may.
	guarded(http.MethodPost, "/v1/runs/:run_id/permission-requests/:request", requireJSON(s.each((*view).answerPermission)), access.RoleRunner)
	guarded(http.MethodGet, "/v1/permission-requests", s.each((*view).listPermissionRequests), access.RoleViewer)
	guarded(http.MethodGet, "/v1/permits", s.each((*view).listPermits), access.RoleViewer)
	guarded(http.MethodDelete, "/v1/permits/:id", s.each((*view).revokePermit), access.RoleAdmin)
	guarded(http.MethodGet, "/v1/skills/:id/versions", s.each((*view).listVersions), access.RoleViewer)
	guarded(http.MethodGet, "/v1/versions", s.each((*view).findVersions), access.RoleViewer)
	// The runtime decides which role each action needs (version.Transitions).
	guarded(http.MethodPost, "/v1/skills/:id/versions/:digest/:action", s.each((*view).changeVersion), access.RoleViewer)

	guarded(http.MethodGet, "/.well-known/skills.json", s.each((*view).wellKnown), access.RoleViewer)
	s.mountAgentSkills(func(method, path string, h echo.HandlerFunc) { guarded(method, path, h, access.RoleViewer) })
	guarded(http.MethodGet, "/v1/tools", s.each((*view).tools), access.RoleViewer)
	guarded(http.MethodPost, "/v1/tools/call", requireJSON(s.each((*view).toolCall)), access.NeedRun)
	guarded(http.MethodPost, "/v1/run-modules", requireJSON(s.each((*view).runModules)), access.NeedRun)

	// The runtime checks the role of an install and a removal (access.NeedInstall, NeedRemove);
	// the routes check the same constants first, so a refused upload is not read.
	guarded(http.MethodPost, "/v1/skills", s.each((*view).createSkill), access.NeedInstall)
	guarded(http.MethodPut, "/v1/skills/:id", s.each((*view).updateSkill), access.NeedInstall)
	guarded(http.MethodDelete, "/v1/skills/:id", s.each((*view).deleteSkill), access.NeedRemove)
	guarded(http.MethodPost, "/v1/reload", s.each((*view).reload), access.RoleAdmin)
	guarded(http.MethodGet, "/v1/cluster", s.cluster, access.RoleAdmin)
	// An admin reads their tenant's configuration; the operator every tenant's (listTenants).
	guarded(http.MethodGet, "/v1/tenants", s.listTenants, access.RoleAdmin)

	// MCP over streamable HTTP. Listing and calling happen inside one session, so the session
	// needs the runner role; the MCP handler checks its own content types, and also refuses a
	// non-loopback Host on a loopback listener.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		guarded(m, "/mcp", s.each((*view).serveMCP), access.NeedRun)
	}

	// With CORS on, every path answers preflights (the CORS middleware writes them, before any
	// authentication: browsers send no key on a preflight). With CORS off, echo's own OPTIONS
	// answer stays, and carries no CORS headers.
	if s.browser.cors != nil {
		for p := range paths {
			g.Add(http.MethodOptions, p, func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }, common...)
		}
	}
}

// serveMCP serves the MCP endpoint of s's runtime.
func (s *view) serveMCP(c echo.Context) error {
	// Runs record the key's caller; the toolset's authoring tools answer only the author role.
	r := c.Request()
	s.mcpHandler.ServeHTTP(c.Response(), r.WithContext(mcpserver.WithPrincipal(r.Context(), principal(c))))
	return nil
}

// Handler returns a standalone http.Handler with every route at the root, for skillbox serve,
// its request bodies bounded by Options.BodyTimeout and MinBodyRate.
func (s *Server) Handler() http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	// Every request gets an id before routing, unmatched ones too; the route's own RequestID
	// then reuses it from the request header.
	e.Pre(middleware.RequestIDWithConfig(middleware.RequestIDConfig{
		RequestIDHandler: func(c echo.Context, id string) { c.Request().Header.Set(echo.HeaderXRequestID, id) },
	}))
	s.Mount(e.Group(""))
	return guardBodies(e, s.opts.BodyTimeout, s.opts.MinBodyRate)
}

// jsonErrors writes a handler's error with this server's error handler, so a mounted group
// answers JSON errors whatever the host app's own HTTPErrorHandler does.
func (s *Server) jsonErrors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := next(c); err != nil {
			s.errorHandler(err, c)
		}
		return nil
	}
}

// accessLog logs one line per request: never the API key, only its name.
func (s *Server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		k, _ := c.Get(keyContext).(keyEntry)
		s.logger.Info("request", "method", c.Request().Method, "path", c.Request().URL.Path,
			"status", c.Response().Status, "ms", time.Since(start).Milliseconds(),
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "key", k.Key, "tenant", k.Tenant)
		return err
	}
}
