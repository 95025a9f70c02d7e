package access

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Require lets a role through from need up, and refuses below it with a *RoleError that names
// the action, the role needed and who lacked it; the zero Principal is told to say who asks, and
// an agent is refused what needs an admin, whatever its role.
func TestRequire(t *testing.T) {
	for _, tc := range []struct {
		p    Principal
		need Role
		want string // "" allowed; else a part of the refusal
	}{
		{Principal{Key: "ci", Role: RoleAuthor}, NeedInstall, ""},
		{Principal{Key: "ops", Role: RoleAdmin}, NeedInstall, ""},
		{Principal{Key: "ops", Role: RoleAdmin}, NeedRemove, ""},
		{Principal{Key: "ci", Role: RoleRunner}, NeedInstall, `installing skill "x" needs the author role; "ci" has runner`},
		{Principal{User: "bob", Key: "k", Role: RoleAuthor}, NeedRemove, `installing skill "x" needs the admin role; "bob" has author`},
		{Principal{}, NeedInstall, "no principal was given"},
		// An agent acts with its principal's role, but never does an admin's part.
		{Principal{Key: "ops", Role: RoleAdmin, Agent: true}, NeedInstall, ""},
		{Principal{Key: "ops", Role: RoleAdmin, Agent: true}, NeedRemove, `installing skill "x" needs a human with the admin role: no agent-facing tool may do it`},
		{Principal{Key: "ci", Role: RoleRunner, Agent: true}, NeedInstall, `needs the author role; "ci" has runner`},
	} {
		err := tc.p.Require(tc.need, "installing", "x")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v needing %s: %v", tc.p, tc.need, err)
		case tc.want != "" && (err == nil || !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v needing %s: %v, want ErrForbidden with %q", tc.p, tc.need, err, tc.want)
		}
		var re *RoleError
		if err != nil && (!errors.As(err, &re) || re.Need != tc.need) {
			t.Errorf("%v: not a *RoleError needing %s", err, tc.need)
		}
	}
}

// Local is the operator: an admin named as given.
func TestLocal(t *testing.T) {
	if p := Local("alice"); p.Caller() != "alice" || !p.SeesAll() || p.Require(NeedRemove, "removing", "x") != nil {
		t.Fatalf("Local: %+v", p)
	}
}

// The operator is an admin of the default tenant without a user, and sees every tenant; a
// tenant's admin sees their own tenant alone, whatever their user; no one else sees any.
func TestOperatorAndTenants(t *testing.T) {
	for _, tc := range []struct {
		p        Principal
		operator bool
		sees     []string // of "", "acme", "globex"
	}{
		{Principal{Key: "ops", Role: RoleAdmin}, true, []string{"", "acme", "globex"}},
		{Local("alice"), true, []string{"", "acme", "globex"}},
		{Principal{Key: "ops", User: "ann", Role: RoleAdmin}, false, []string{""}},
		{Principal{Key: "ops", Role: RoleAdmin, Agent: true}, false, nil},
		{Principal{Key: "pub", Role: RolePublisher}, false, nil},
		{Principal{Key: "carol", Tenant: "acme", User: "carol@acme", Role: RoleAdmin}, false, []string{"acme"}},
		{Principal{Key: "acme-ops", Tenant: "acme", Role: RoleAdmin}, false, []string{"acme"}},
		{Principal{Key: "bob", Tenant: "acme", Role: RoleAuthor}, false, nil},
		{Principal{}, false, nil},
	} {
		if got := tc.p.Operator(); got != tc.operator {
			t.Errorf("%+v: Operator() = %v, want %v", tc.p, got, tc.operator)
		}
		var sees []string
		for _, name := range []string{"", "acme", "globex"} {
			if tc.p.SeesTenant(name) {
				sees = append(sees, name)
			}
		}
		if !slices.Equal(sees, tc.sees) {
			t.Errorf("%+v sees tenants %q, want %q", tc.p, sees, tc.sees)
		}
	}
}
