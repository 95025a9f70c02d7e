package access

import "fmt"

// Principal is who makes a call: the tenant of its key, the user the key stands for, the key's
// role and the key's name. A face builds one from what authenticated the request and hands it
// on; what the principal may see is decided here, never by a string whose emptiness means "all".
type Principal struct {
	// Tenant is the key's tenant; "" is the default tenant.
	Tenant string
	// User is the person or service the key stands for; "" for a key of the tenant as a whole.
	User string
	Role Role
	// Key names the key (an API key's name, "local" for the operator's shell). Keys without a
	// name are refused when they load, so every principal a face builds has one.
	Key string
	// Agent is set when a model makes the call for the principal, through an agent-facing tool
	// (the agent toolset's create_skill, update_skill, delete_skill): it writes and deletes only
	// skills agents wrote, under the policy's agents' ceiling, and never does what needs an
	// admin (approve or reject a version, remove a skill), whatever the key's role.
	Agent bool
}

// Caller is how a record names the principal: its user, else its key's name.
func (p Principal) Caller() string {
	if p.User != "" {
		return p.User
	}
	return p.Key
}

// SeesAll reports whether p sees every run and version of its tenant, every user's own among
// them: the tenant's admins do.
func (p Principal) SeesAll() bool { return p.Role >= RoleAdmin }

// Sees reports whether p sees a run, or what it left, visible to visibleTo (Record.VisibleTo):
// the tenant's runs ("") are everyone's in it, a user's own runs that user's and the admins'. A
// principal without a name sees no user's own runs.
func (p Principal) Sees(visibleTo string) bool {
	if p.SeesAll() || visibleTo == "" {
		return true
	}
	c := p.Caller()
	return c != "" && c == visibleTo
}

// noViewer is the viewer of a principal that is neither an admin nor named: no run is visible
// to it, as a user's name is never empty and never this.
const noViewer = "\x00"

// Viewer is the viewer a store filters runs and versions by: "" (every one) for a principal
// that sees all, else the principal's caller, whose own runs it sees beside the tenant's.
func (p Principal) Viewer() string {
	switch {
	case p.SeesAll():
		return ""
	case p.Caller() == "":
		return noViewer
	}
	return p.Caller()
}

// Operator reports whether p is the operator's: an admin of the default tenant without a user.
// Only the operator reads what spans every tenant (the cluster, the tenants and their keys); a
// user's key is a person's even when it is an admin's, and a tenant's admin is that tenant's.
func (p Principal) Operator() bool { return p.Allows(RoleAdmin) && p.Tenant == "" && p.User == "" }

// SeesTenant reports whether p may read how tenant name is configured (its keys, its quota):
// the operator every tenant's, a tenant's admin their own tenant's alone ("" is the default
// tenant).
func (p Principal) SeesTenant(name string) bool {
	return p.Operator() || (p.Allows(RoleAdmin) && p.Tenant == name)
}

// Actor is the principal as a version change records it: its caller, with its role.
func (p Principal) Actor() Actor { return Actor{Name: p.Caller(), Role: p.Role, Agent: p.Agent} }

// Allows reports whether p may do what needs the role need: its role is at least need, and an
// agent never does what needs an admin.
func (p Principal) Allows(need Role) bool {
	return p.Role >= need && !(p.Agent && need >= RoleAdmin)
}

// Local is the principal of the operator at the machine: the CLI's commands, MCP over stdio, and
// an embedding program's own calls. It administers the default tenant.
func Local(name string) Principal { return Principal{Key: name, Role: RoleAdmin} }

// The role each use of and change to a tenant's skills needs. The runtime checks it (Principal.Require); a
// face may check the same constant early, before it reads a body, but decides nothing else.
const (
	NeedRun     = RoleRunner // run a skill, its script or program
	NeedInstall = RoleAuthor // create or update a skill (a new version)
	NeedRemove  = RoleAdmin  // remove a skill
)

// Require returns nil when p has at least the role need to do action (a verb: "running") to
// skill, and otherwise a *RoleError that names both (ErrForbidden). It costs an allowed call
// nothing: the message is made only for a refusal, and every run asks.
func (p Principal) Require(need Role, action, skill string) error {
	if p.Allows(need) {
		return nil
	}
	return &RoleError{Action: fmt.Sprintf("%s skill %q", action, skill), Need: need, Actor: p.Actor()}
}
