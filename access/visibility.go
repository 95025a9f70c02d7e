package access

import (
	"errors"
	"fmt"
)

// Visibility says who sees a skill within its tenant.
type Visibility string

const (
	// VisibilityOrg is a skill of the whole tenant: every key of the tenant sees it (the
	// default, and all there is without users).
	VisibilityOrg Visibility = "org"
	// VisibilityUser is a skill of one user: only that user's Runtime (see [Runtime.User]) lists,
	// reads and runs it, and only that user (and the tenant's admins) sees its runs
	// (Principal.Sees).
	VisibilityUser Visibility = "user"
)

// ErrVisibility is an install or removal that the skill's visibility does not allow: a
// *VisibilityError says which and what to do.
var ErrVisibility = errors.New("visibility")

// VisibilityError is an install or removal that clashes with a skill's visibility.
type VisibilityError struct {
	Skill string
	Msg   string
}

func (e *VisibilityError) Error() string { return fmt.Sprintf("skill %q: %s", e.Skill, e.Msg) }

func (e *VisibilityError) Is(target error) bool { return target == ErrVisibility }

// Actor is who a refusal names (Principal.Actor): a name for the record, the role the face gave
// them, and whether an agent acted for them (Principal.Agent), which never does an admin's part.
type Actor struct {
	Name  string
	Role  Role
	Agent bool
}

// ErrForbidden is a change the actor's role does not allow; a *RoleError says more.
var ErrForbidden = errors.New("forbidden")

// RoleError is an action that needs a role the actor lacks.
type RoleError struct {
	Action string
	Need   Role
	Actor  Actor
}

func (e *RoleError) Error() string {
	if e.Actor.Agent && e.Need >= RoleAdmin && e.Actor.Role >= e.Need { // refused for being an agent
		return fmt.Sprintf("%s needs a human with the %s role: no agent-facing tool may do it", e.Action, e.Need)
	}
	if e.Actor.Name == "" && !e.Actor.Role.Valid() {
		// The zero Principal: a caller that said nothing of who it is.
		return fmt.Sprintf("%s needs the %s role, and no principal was given: pass who asks (an access.Principal; access.Local for the operator)", e.Action, e.Need)
	}
	return fmt.Sprintf("%s needs the %s role; %q has %s", e.Action, e.Need, e.Actor.Name, e.Actor.Role)
}

func (e *RoleError) Is(target error) bool { return target == ErrForbidden }
