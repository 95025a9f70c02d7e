package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/agent/search"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
)

// tenant is one tenant a Server serves: its Runtime and run history, the runs it holds as
// resources (a tenant's key watches or cancels its own tenant's runs only, within limits of the
// tenant's own), and the views of it made so far.
type tenant struct {
	srv     *Server
	name    string // as Options.Tenants names it; "" the default tenant
	rt      *runtime.Runtime
	history History
	logger  *slog.Logger
	live    *liveRuns
	// own is the tenant's view, every request's but those of users with skills of their own;
	// users holds those users' views, made at a user's first request.
	own     *view
	usersMu sync.Mutex
	users   map[string]*view
}

// view is what a request sees of a tenant: the Runtime it reads and runs through (the tenant's,
// or a user's own skills over it: runtime.User), and what the server derives from that Runtime's
// catalog (its MCP server, its tools' search index, its agent-skills index). The handlers are
// views' methods; the Server's settings are reached through it, and the tenant's runs in flight
// and history are the tenant's, shared by all its views: each run is checked against its caller.
type view struct {
	*Server
	t       *tenant
	rt      *runtime.Runtime
	history History
	logger  *slog.Logger
	live    *liveRuns

	mcp        *mcpserver.Server
	mcpHandler http.Handler
	agent      *agentSkills // the /.well-known/agent-skills index

	idxMu  sync.Mutex
	idx    *search.Index
	idxGen uint64
}

// newTenant is tenant name of s over rt, with its history and logger.
func (s *Server) newTenant(name string, rt *runtime.Runtime, history History, logger *slog.Logger) *tenant {
	t := &tenant{srv: s, name: name, rt: rt, history: history, logger: logger}
	t.live, _ = newLiveRuns(s.opts.LiveRuns) // New checks opts.LiveRuns first
	if s.opts.Cluster != nil {
		s.shareEvents(t)
	}
	t.own = t.newView(rt)
	return t
}

// newView is a view of t through rt (t's own Runtime, or one of its users').
func (t *tenant) newView(rt *runtime.Runtime) *view {
	v := &view{Server: t.srv, t: t, rt: rt, history: t.history, logger: t.logger, live: t.live, agent: newAgentSkills()}
	mopts := mcpserver.Options{Logger: t.logger, Remote: true, Offer: t.srv.opts.Offer, ToolNames: t.srv.opts.ToolNames}
	if t.srv.opts.Cluster != nil { // a tool call this node has no room for goes to the cluster's queue
		mopts.Run = v.clusterRun
	}
	v.mcp = mcpserver.New(rt, mopts)
	v.mcpHandler = v.mcp.Handler()
	// A server lists its skills: scan now (the runtime defers it until asked), so the first
	// request does not wait for it, and what it serves is the registry as of its start until a
	// reload, as the API promises.
	rt.Skills()
	return v
}

// tenantNamed is the tenant this server serves under name ("" the default one), or nil.
func (s *Server) tenantNamed(name string) *tenant {
	if name == "" {
		return s.def
	}
	return s.tenants[name]
}

// each adapts a handler to a route: the request's principal picks its view. The tenant of the
// caller's key picks the tenant (a key without one is the default tenant's), so a handler only
// ever holds its caller's tenant's runtime and history; then the key's user picks the user's
// own view when the user has skills of their own, so no handler holds another user's.
// Authentication runs before it.
func (s *Server) each(h func(*view, echo.Context) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		k, _ := c.Get(keyContext).(keyEntry)
		t := s.tenantNamed(k.Tenant)
		if t == nil { // New checked every key's tenant: this is a bug, and must not fall back
			return fmt.Errorf("key %s: tenant %q is not served", k.Key, k.Tenant)
		}
		v, err := t.viewFor(c, k)
		if err != nil {
			return err
		}
		return h(v, c)
	}
}

// viewFor is the view of t that serves key k's request: the runtime decides whose
// (runtime.ViewFor), for the key's principal, or the user an admin names in HeaderUser.
func (t *tenant) viewFor(c echo.Context, k keyEntry) (*view, error) {
	user, err := requestUser(c, k)
	if err != nil {
		return nil, err
	}
	who := k.Principal
	if user != who.Caller() {
		who.User = user // an admin acting as a user
	}
	rt, err := t.rt.ViewFor(c.Request().Context(), who)
	if err != nil || rt == t.rt {
		return t.own, err
	}
	return t.userView(c.Request().Context(), rt.UserName())
}

// userView is the view of one user of t, over the user's Runtime (runtime.User), made at the
// first call.
func (t *tenant) userView(ctx context.Context, user string) (*view, error) {
	t.usersMu.Lock()
	defer t.usersMu.Unlock()
	if v := t.users[user]; v != nil {
		return v, nil
	}
	rt, err := t.rt.User(ctx, user)
	if err != nil {
		return nil, err
	}
	v := t.newView(rt)
	if t.users == nil {
		t.users = map[string]*view{}
	}
	t.users[user] = v
	return v, nil
}
