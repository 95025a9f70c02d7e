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
	// VisibilityUser is a skill of one user: only that user's Runtime (see [Runtime.User])
	// lists, reads and runs it, and only that user (and the tenant's admins) sees its runs (Sees).
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

// RunViewer is whose view of a tenant's runs a caller (a user's name, and the role a face gave
// them) has: "" — every run of the tenant — for an admin, the caller's own otherwise (see Sees).
func RunViewer(caller string, role Role) string {
	if role >= RoleAdmin {
		return ""
	}
	return caller
}

// Sees reports whether a viewer (RunViewer) sees a run, or what it left, visible to visibleTo
// (Record.VisibleTo): the tenant's runs are everyone's in it, a user's own runs that user's.
func Sees(viewer, visibleTo string) bool {
	return viewer == "" || visibleTo == "" || visibleTo == viewer
}

// Actor is who asks for a change of a version's status: a name for the record, the role the
// face gave them, and whether they are an agent (an agent-facing tool), which may never approve.
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
	if e.Actor.Agent {
		return fmt.Sprintf("%s needs a human with the %s role: no agent-facing tool may %s a version", e.Action, e.Need, e.Action)
	}
	return fmt.Sprintf("%s needs the %s role; %q has %s", e.Action, e.Need, e.Actor.Name, e.Actor.Role)
}

func (e *RoleError) Is(target error) bool { return target == ErrForbidden }
