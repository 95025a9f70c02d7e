package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// Skills an agent writes (the toolset's create_skill, update_skill and delete_skill) are held to
// their own ceiling in the policy, AgentSkills, stricter than the operator's skills and empty by
// default: an agent under a prompt injection must not be able to write itself a skill that
// reaches a secret or a host. The runtime decides it, whatever face the agent used:
//   - writing is off unless the policy enables it (AgentSkills.Enabled);
//   - an agent's skill is marked when it is installed (authorMarker, a file no package may
//     carry), and is granted under the ceiling at every load, so a later policy change cannot
//     lift it past the ceiling either;
//   - a skill that asks for anything beyond the ceiling is not installed: the refusal lists
//     what, until a human grants it (raises the ceiling, or installs the skill as theirs); a
//     runtime that keeps versions installs it pending instead, and it does not run until an
//     admin approves it (see Transitions);
//   - an agent may update and delete only skills an agent wrote.

// AgentSkills is the policy for skills written by an agent.
type AgentSkills struct {
	// Enabled lets agents create, update and delete skills. Off by default.
	Enabled bool
	// The ceiling: what a skill an agent wrote may be granted at most, within the policy's own
	// lists. Network lists host patterns (covered by the policy's network list too), Env and
	// Secrets names the policy gives values for, Files virtual directories of the policy's
	// mounts; Limits caps the limits (zero fields: the policy's ceilings). Empty, the default,
	// grants nothing but the skill's own directory.
	Network []string
	Env     []string
	Secrets []string
	Files   []string
	Limits  spec.Limits
}

// authorMarker marks a skill an agent wrote. Packages may not carry hidden files, so only the
// runtime writes it.
const authorMarker = ".skillbox-author.json"

// authorship is what authorMarker holds.
type authorship struct {
	By      string    `json:"by"` // "agent"
	Caller  string    `json:"caller,omitempty"`
	Face    run.Face  `json:"face,omitempty"`
	Created time.Time `json:"created"`
}

// Errors of agent authoring.
var (
	// ErrAuthoringOff is an agent's create, update or delete while the policy does not enable
	// them (AgentSkills.Enabled).
	ErrAuthoringOff = errors.New("skills written by agents are not enabled")
	// ErrNotAgentSkill is an agent's update or delete of a skill an agent did not write.
	ErrNotAgentSkill = errors.New("not a skill an agent wrote")
	// ErrBeyondCeiling is a skill that asks for more than an agent's skill may have.
	ErrBeyondCeiling = errors.New("asks for more than a skill written by an agent may have")
)

// AgentWritten reports whether an agent wrote s (through create_skill or update_skill).
func (s *Skill) AgentWritten() bool { return s.agent }

// forAgentSkills is the policy a skill an agent wrote is granted under: p's lists cut to the
// ceiling, no special networks, no grants to programs by skill id.
func (p *Policy) forAgentSkills() *Policy {
	a := p.AgentSkills
	c := p.clone()
	c.AllowNetworks, c.Scripts = nil, nil
	policyHosts := p.networkList()
	c.Network = nil
	for _, s := range a.Network {
		if q, err := netguard.ParsePattern(s); err == nil && policyHosts.Covers(q) {
			c.Network = append(c.Network, s)
		}
	}
	c.Env = map[string]string{}
	for _, name := range a.Env {
		if v, ok := p.Env[name]; ok {
			c.Env[name] = v
		}
	}
	c.Secrets = map[string]PolicySecret{}
	for _, name := range a.Secrets {
		if v, ok := p.Secrets[name]; ok {
			c.Secrets[name] = v
		}
	}
	c.Files = nil
	for _, m := range p.Files {
		if slices.Contains(a.Files, m.Path) {
			c.Files = append(c.Files, m)
		}
	}
	c.Limits = p.ceilings().Capped(a.Limits.WithDefaults(p.ceilings()))
	return c
}

// ceilingError is the refusal of a skill an agent wrote that asks for more than its ceiling:
// every line of what its grants (its execute's, its programs') did not give it.
func ceilingError(id string, grants ...*Grant) error {
	var refused []string
	for _, g := range grants {
		if g != nil {
			refused = append(refused, g.Refused...)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("skill %q %w (the policy's agentSkills ceiling); a human must grant it, or the skill must ask for less:\n  - %s",
		id, ErrBeyondCeiling, strings.Join(compactStrings(refused), "\n  - "))
}

// writeAuthorship marks the package staged in dir as an agent's.
func writeAuthorship(dir string, a authorship) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, authorMarker), data, 0o644)
}

// AgentSkillsEnabled reports whether the policy lets agents write skills.
func (rt *Runtime) AgentSkillsEnabled() bool { return rt.policy.Load().AgentSkills.Enabled }

// RemoveByAgent deletes skill id for an agent (the toolset's delete_skill): only when the policy
// enables agents' skills, and only a skill an agent wrote.
func (rt *Runtime) RemoveByAgent(ctx context.Context, id string) error {
	if !rt.AgentSkillsEnabled() {
		return fmt.Errorf("delete %q: %w: the operator enables them in the policy (agentSkills: {enabled: true})", id, ErrAuthoringOff)
	}
	s, ok := rt.lookup(id)
	if !ok {
		return rt.missing(id)
	}
	if !s.agent {
		return fmt.Errorf("delete %q: %w: an agent may delete only the skills agents wrote", id, ErrNotAgentSkill)
	}
	return rt.Remove(ctx, id)
}
