package server

import (
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

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

// tenantInfo is one tenant in GET /v1/tenants: what the server was configured with, and what is
// safe to show of it. Its policy (secrets and host paths), its directories and its keys' secrets
// are never shown; its retention is the store's recorder's, which the server does not hold.
type tenantInfo struct {
	// Name is the tenant's; "" is the default tenant, the server's own runtime.
	Name string `json:"name"`
	// Skills counts the skills its keys see (its own and, for a tenant that shares them, the
	// server's), not its users' own.
	Skills int `json:"skills"`
	// Quota bounds its runs; {} is none.
	Quota runtime.Quota `json:"quota"`
	// Keys are its API keys, by name: never the key.
	Keys []keyInfo `json:"keys"`
	// Users are the users its keys stand for, sorted: who may have skills of their own.
	Users []string `json:"users"`
}

// keyInfo is one API key as GET /v1/tenants shows it: its name, role and user.
type keyInfo struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// User is the user the key stands for; "" for a key of the tenant as a whole.
	User string `json:"user"`
}

// listTenants answers GET /v1/tenants: the tenants the caller may read the configuration of
// (access.Principal.SeesTenant: the operator every one, a tenant's admin their own), the
// default tenant first, then by name.
func (s *Server) listTenants(c echo.Context) error {
	p := principal(c)
	out := []tenantInfo{}
	for _, name := range append([]string{""}, slices.Sorted(maps.Keys(s.tenants))...) {
		if !p.SeesTenant(name) {
			continue
		}
		t := s.tenantNamed(name)
		info := tenantInfo{Name: name, Skills: len(t.rt.Skills()), Quota: t.rt.Quota(), Keys: []keyInfo{}, Users: []string{}}
		for _, k := range s.keys {
			if k.Tenant != name {
				continue
			}
			info.Keys = append(info.Keys, keyInfo{Name: k.Key, Role: k.Role.String(), User: k.User})
			if k.User != "" && !slices.Contains(info.Users, k.User) {
				info.Users = append(info.Users, k.User)
			}
		}
		slices.Sort(info.Users)
		out = append(out, info)
	}
	return c.JSON(http.StatusOK, map[string][]tenantInfo{"tenants": out})
}
