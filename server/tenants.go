package server

import (
	"fmt"
	"maps"
	"slices"

	"github.com/skillbox-dev/skillbox/runtime"
)

// Tenant is one tenant a Server serves: its own Runtime (its skills, policy, secrets, quotas,
// recent runs) and its own run history (a store's tenant view: store.Store.Tenant).
type Tenant struct {
	Runtime *runtime.Runtime
	History History
}

// addTenants adds a tenant for each of s.opts.Tenants: the same handlers serve every tenant,
// each over its own runtime and history.
func (s *Server) addTenants() error {
	if len(s.opts.Tenants) == 0 {
		return nil
	}
	s.tenants = map[string]*tenant{}
	for _, name := range slices.Sorted(maps.Keys(s.opts.Tenants)) {
		t := s.opts.Tenants[name]
		switch {
		case name == "":
			return fmt.Errorf("server: a tenant needs a name (the default tenant is the server's own runtime)")
		case t.Runtime == nil:
			return fmt.Errorf("server: tenant %q has no runtime", name)
		case t.Runtime == s.def.rt:
			return fmt.Errorf("server: tenant %q has the default tenant's runtime: each tenant needs its own", name)
		}
		s.tenants[name] = s.newTenant(name, t.Runtime, t.History, s.logger.With("tenant", name))
	}
	return nil
}
