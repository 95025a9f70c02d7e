package server

import (
	"fmt"
	"maps"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Tenant is one tenant a Server serves: its own Runtime (its skills, policy, secrets, quotas,
// recent runs) and its own run history (a store's tenant view: store.Store.Tenant).
type Tenant struct {
	Runtime *runtime.Runtime
	History History
}

// newServer is a Server of rt with opts, without keys: the default tenant's, or a tenant's.
func newServer(rt *runtime.Runtime, opts Options) *Server {
	s := &Server{rt: rt, opts: opts, logger: opts.Logger, version: "(devel)",
		mcp: mcpserver.New(rt, mcpserver.Options{Logger: opts.Logger, Remote: true, Offer: opts.Offer}), agent: newAgentSkills()}
	s.mcpHandler = s.mcp.Handler()
	// Each Server holds its own runs as resources: a tenant's key can watch or cancel its
	// tenant's runs only. The limits are per tenant.
	s.live, _ = newLiveRuns(opts.LiveRuns) // New checks opts.LiveRuns first
	// A server lists its skills: scan now (the runtime defers it until asked), so the first
	// request does not wait for it, and what it serves is the registry as of its start until a
	// reload, as the API promises.
	rt.Skills()
	return s
}

// addTenants makes a Server for each of s.opts.Tenants, sharing s's keys and guards: the same
// handlers serve every tenant, each over its own runtime and history.
func (s *Server) addTenants() error {
	if len(s.opts.Tenants) == 0 {
		return nil
	}
	s.tenants = map[string]*Server{}
	for _, name := range slices.Sorted(maps.Keys(s.opts.Tenants)) {
		t := s.opts.Tenants[name]
		switch {
		case name == "":
			return fmt.Errorf("server: a tenant needs a name (the default tenant is the server's own runtime)")
		case t.Runtime == nil:
			return fmt.Errorf("server: tenant %q has no runtime", name)
		case t.Runtime == s.rt:
			return fmt.Errorf("server: tenant %q has the default tenant's runtime: each tenant needs its own", name)
		}
		opts := s.opts
		opts.Tenants, opts.History = nil, t.History
		opts.Logger = s.logger.With("tenant", name)
		ts := newServer(t.Runtime, opts)
		ts.keys, ts.browser, ts.version = s.keys, s.browser, s.version
		s.tenants[name] = ts
	}
	return nil
}

// each adapts a handler of one tenant's Server to a route: the tenant of the caller's key
// picks the Server, so a handler only ever holds its caller's tenant's runtime and history;
// then the key's user picks the user's own Server when the user has skills of their own, so
// no handler holds another user's.
// Authentication runs before it; a key without a tenant is the default tenant's (s itself).
func (s *Server) each(h func(*Server, echo.Context) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		k, _ := c.Get(keyContext).(keyEntry)
		ts := s
		if k.Tenant != "" {
			ts = s.tenants[k.Tenant]
			if ts == nil { // New checked every key's tenant: this is a bug, and must not fall back
				return fmt.Errorf("key %s: tenant %q has no server", k.Key, k.Tenant)
			}
		}
		us, err := ts.forUser(c, k)
		if err != nil {
			return err
		}
		return h(us, c)
	}
}
