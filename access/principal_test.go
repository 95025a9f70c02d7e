package access

import (
	"errors"
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
