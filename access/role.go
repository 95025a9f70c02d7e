// Package access says who may do what: the roles of API keys, the visibility of a skill (the
// tenant's, or one user's own), and the errors of a call its caller may not make. It is a leaf:
// the runtime decides with it, and the faces translate its answers.
package access

import (
	"fmt"
	"strings"
)

// Role is what a caller may do. Each role includes the ones before it. The faces map their
// callers to roles (an API key's role, the local operator's admin); the runtime's rules that
// depend on who asks (the transitions of a skill's versions) name the role they need.
type Role int

const (
	RoleViewer    Role = iota + 1 // read skills, instructions, resources, tools, runs, versions
	RoleRunner                    // run skills
	RoleAuthor                    // create and update skills (new versions)
	RolePublisher                 // publish, deprecate and yank versions
	RoleAdmin                     // approve or reject new permissions, delete skills, reload
)

var roleNames = []string{RoleViewer: "viewer", RoleRunner: "runner", RoleAuthor: "author", RolePublisher: "publisher", RoleAdmin: "admin"}

// Valid says whether r is one of the roles above.
func (r Role) Valid() bool { return r >= RoleViewer && r <= RoleAdmin }

func (r Role) String() string {
	if r.Valid() {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", int(r))
}

// ParseRole reads a role name, in any case.
func ParseRole(s string) (Role, error) {
	for r, n := range roleNames {
		if n != "" && strings.EqualFold(s, n) {
			return Role(r), nil
		}
	}
	return 0, fmt.Errorf("unknown role %q: use viewer, runner, author, publisher or admin", s)
}
