package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/labstack/echo/v4"
	"gopkg.in/yaml.v3"

	"github.com/skillbox-dev/skillbox/access"
)

// APIKey is one client's key. Only its hash is kept once the server is built.
type APIKey struct {
	Name string      `yaml:"name"`
	Key  string      `yaml:"key"`
	Role access.Role `yaml:"-"`
	// Tenant is the tenant the key belongs to (one of Options.Tenants); "" is the default
	// tenant, the server's own runtime.
	Tenant string `yaml:"tenant"`
	// User names the person or service the key stands for: runs, versions and approvals record
	// it as their caller. "" records the key's name.
	User string `yaml:"user"`
}

type keyEntry struct {
	access.Principal
	hash [32]byte
}

// LoadKeys reads a keys file: a YAML list of {name, key, role, tenant, user} (tenant and user
// optional); a key may be written "env:VAR" to take it from the environment, so the file need
// not hold secrets.
func LoadKeys(path string) ([]APIKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []struct{ Name, Key, Role, Tenant, User string }
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var keys []APIKey
	for i, r := range raw {
		if strings.TrimSpace(r.Name) == "" {
			return nil, fmt.Errorf("%s: key %d: no name: give every key a name (runs, versions and approvals record it as who asked)", path, i)
		}
		role, err := access.ParseRole(r.Role)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d (%s): %w", path, i, r.Name, err)
		}
		key := r.Key
		if v, ok := strings.CutPrefix(key, "env:"); ok {
			var set bool
			if key, set = os.LookupEnv(v); !set || key == "" {
				return nil, fmt.Errorf("%s: key %d (%s): the environment variable %s is not set", path, i, r.Name, v)
			}
		}
		if len(key) < 16 {
			return nil, fmt.Errorf("%s: key %d (%s): a key must be at least 16 characters", path, i, r.Name)
		}
		keys = append(keys, APIKey{Name: r.Name, Key: key, Role: role, Tenant: r.Tenant, User: r.User})
	}
	return keys, nil
}

const keyContext = "skillbox.key"

// authenticate identifies the caller. Without configured keys everyone is an admin: the server is
// then loopback-only unless told otherwise (see cmd/skillbox serve).
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.keys) == 0 {
			c.Set(keyContext, keyEntry{Principal: access.Principal{Key: "anonymous", Role: access.RoleAdmin}})
			return next(c)
		}
		// Either header may carry the key; a stale one in the other does not hide a good one.
		var presented []string
		if k := c.Request().Header.Get("X-API-Key"); k != "" {
			presented = append(presented, k)
		}
		if auth := c.Request().Header.Get("Authorization"); auth != "" {
			scheme, token, _ := strings.Cut(auth, " ")
			if strings.EqualFold(scheme, "Bearer") {
				presented = append(presented, strings.TrimSpace(token))
			}
		}
		for _, p := range presented {
			h := sha256.Sum256([]byte(p))
			for _, k := range s.keys {
				if subtle.ConstantTimeCompare(h[:], k.hash[:]) == 1 {
					c.Set(keyContext, k)
					return next(c)
				}
			}
		}
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="skillbox"`)
		return httpError(http.StatusUnauthorized, "unauthorized", "a valid API key is required (Authorization: Bearer <key> or X-API-Key)")
	}
}

// require lets through callers with at least role.
func require(role access.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			k, _ := c.Get(keyContext).(keyEntry)
			if k.Role < role {
				return httpError(http.StatusForbidden, "forbidden", "this needs the %s role; the key %q has %s", role, k.Key, k.Role)
			}
			return next(c)
		}
	}
}

// identity is the answer of GET /v1/me: who the request's key makes its caller, as
// authenticate decided it. It names the key, never holds it.
type identity struct {
	// Role is the key's role: viewer, runner, author, publisher or admin.
	Role string `json:"role"`
	// Tenant is the key's tenant, "" for the default tenant.
	Tenant string `json:"tenant"`
	// User is the person or service the key stands for, "" for a key of the tenant as a whole.
	User string `json:"user"`
	// Caller is how runs, versions and approvals record the caller (access.Principal.Caller):
	// the user, else the key's name. GET /v1/runs?caller= takes it.
	Caller string `json:"caller"`
	// Key is the key's name.
	Key string `json:"key"`
	// Operator says the caller is the operator's (access.Principal.Operator): it reads the
	// cluster and every tenant.
	Operator bool `json:"operator"`
	// Keyless says the server has no API keys: every request on its loopback address is the
	// operator's admin, and approve and reject are not offered over HTTP.
	Keyless bool `json:"keyless"`
}

// me answers GET /v1/me: who the request's key is, for a client deciding whether to ask for a
// key and what to offer. The key's role and user are the principal's; nothing is decided here.
func (s *Server) me(c echo.Context) error {
	p := principal(c)
	return c.JSON(http.StatusOK, identity{Role: p.Role.String(), Tenant: p.Tenant, User: p.User, Caller: p.Caller(),
		Key: p.Key, Operator: p.Operator(), Keyless: len(s.keys) == 0})
}
