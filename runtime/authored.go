package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// Skills an agent writes (the toolset's create_skill, update_skill and delete_skill) are held to
// their own ceiling in the policy, AgentSkills, stricter than the operator's skills and empty by
// default: an agent under a prompt injection must not be able to write itself a skill that
// reaches a secret or a host. The runtime decides it, whatever face the agent used:
//   - writing is off unless the policy enables it (AgentSkills.Enabled);
//   - an agent's skill is marked when it is installed (registry.AuthorMarker, a file no package may
//     carry), and is granted under the ceiling at every load, so a later policy change cannot
//     lift it past the ceiling either;
//   - a skill that asks for anything beyond the ceiling is not installed: the refusal lists
//     what, until a human grants it (raises the ceiling, or installs the skill as theirs); a
//     runtime that keeps versions installs it pending instead, and it does not run until an
//     admin approves it (see Transitions);
//   - an agent may update and delete only skills an agent wrote.

// authorship is what registry.AuthorMarker holds.
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

// ceilingError is the refusal of a skill an agent wrote that asks for more than its ceiling:
// every line of what its grants (its execute's, its programs') did not give it.
func ceilingError(id string, grants ...*policy.Grant) error {
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
		id, ErrBeyondCeiling, strings.Join(registry.CompactStrings(refused), "\n  - "))
}

// writeAuthorship marks the package staged in dir as an agent's.
func writeAuthorship(dir string, a authorship) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, registry.AuthorMarker), data, 0o644)
}

// AgentSkillsEnabled reports whether the policy lets agents write skills.
func (rt *Runtime) AgentSkillsEnabled() bool { return rt.policy.Load().AgentSkills.Enabled }

// removeByAgent is Remove for an agent (who.Agent): only when the policy enables agents'
// skills, only a skill an agent wrote, and only for a principal who may install
// (access.NeedInstall), as writing it needed.
func (rt *Runtime) removeByAgent(ctx context.Context, who access.Principal, id string) error {
	if err := who.Require(access.NeedInstall, "deleting", id); err != nil {
		return err
	}
	if !rt.AgentSkillsEnabled() {
		return fmt.Errorf("delete %q: %w: the operator enables them in the policy (agentSkills: {enabled: true})", id, ErrAuthoringOff)
	}
	s, ok := rt.lookup(id)
	if !ok {
		return rt.missing(id)
	}
	if !s.AgentWritten() {
		return fmt.Errorf("delete %q: %w: an agent may delete only the skills agents wrote", id, ErrNotAgentSkill)
	}
	return rt.remove(ctx, id)
}
