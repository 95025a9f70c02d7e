package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/runtime"
)

// HeaderUser is the header with which a tenant's admin acts in one user's view of the tenant:
// to read, approve or remove that user's own skills (visibility user). Any other key sending it
// is refused.
const HeaderUser = "Skillbox-User"

// requestUser is the user a request with key k acts as: the key's own (keyEntry.caller), or the
// one an admin names in HeaderUser; any other key naming one is refused.
func requestUser(c echo.Context, k keyEntry) (string, error) {
	as := c.Request().Header.Get(HeaderUser)
	switch {
	case as == "":
		return k.Caller(), nil
	case k.Role < access.RoleAdmin:
		return "", httpError(http.StatusForbidden, "forbidden", "%s: only an admin acts as another user; %q has %s", HeaderUser, k.Key, k.Role)
	case len(as) > 256:
		return "", httpError(http.StatusBadRequest, "bad_request", "%s: at most 256 bytes", HeaderUser)
	}
	return as, nil
}

// installRuntime is the Runtime that installs a skill of visibility v for k: the user's own
// Runtime for VisibilityUser (made for the user's first skill), the view's otherwise.
func (s *view) installRuntime(c echo.Context, k keyEntry, v access.Visibility) (*runtime.Runtime, error) {
	if v != access.VisibilityUser || s.rt.UserName() != "" {
		return s.rt, nil
	}
	user, err := requestUser(c, k)
	if err != nil {
		return nil, err
	}
	if user == "" {
		return nil, httpError(http.StatusBadRequest, "bad_request", "visibility user: a skill of your own needs an API key (a server without keys has no users)")
	}
	u, err := s.t.userView(c.Request().Context(), user)
	if err != nil {
		return nil, err
	}
	return u.rt, nil
}

// visibility reads ?visibility= of an upload: "" (where the skill is; the tenant's for a new
// one), org or user.
func visibility(c echo.Context) (access.Visibility, error) {
	vals := c.QueryParams()["visibility"]
	if len(vals) == 0 {
		return "", nil
	}
	if len(vals) > 1 {
		return "", httpError(http.StatusBadRequest, "bad_request", "visibility: give it once")
	}
	switch v := access.Visibility(vals[0]); v {
	case access.VisibilityOrg, access.VisibilityUser:
		return v, nil
	}
	return "", httpError(http.StatusBadRequest, "bad_request", "visibility %q: want org (the tenant's, the default) or user (yours alone)", vals[0])
}

// principal is who the request is (access.Principal): its key's, the anonymous admin's on a
// server without keys, or no one's (the zero Principal, which sees only the tenant's runs) when
// nothing authenticated it.
func principal(c echo.Context) access.Principal {
	k, _ := c.Get(keyContext).(keyEntry)
	return k.Principal
}

// viewer is whose view of the tenant's runs a request has, for a store's query
// (access.Principal.Viewer): "" (every run) for an admin's key, and on a server without keys.
func viewer(c echo.Context) string { return principal(c).Viewer() }

// sees reports whether the request's caller sees a run visible to visibleTo.
func sees(c echo.Context, visibleTo string) bool { return principal(c).Sees(visibleTo) }

// recentRun is the runtime's record of recent run id, when the caller may see it.
func (s *view) recentRun(c echo.Context, id string) (history.Record, bool) {
	rec, ok := s.rt.RunRecord(principal(c), id)
	if !ok {
		return history.Record{}, false
	}
	return rec, true
}

// liveRun is run id as a resource of s, when the caller may see it.
func (s *view) liveRun(c echo.Context, id string) *liveRun {
	run := s.live.get(id)
	if run == nil || !sees(c, run.visibleTo) {
		return nil
	}
	return run
}
