package runtime

import (
	"strings"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// A Runtime is a catalog of its skills, each seen read-only.
var (
	_ catalog.Catalog[*Skill] = (*Runtime)(nil)
	_ catalog.Skill           = (*registry.Skill)(nil)
)

// Summary is a skill's metadata: what a model needs to choose a skill, without its instructions,
// schema or module. The CLI's list and the HTTP API's list print it.
type Summary struct {
	ID string `json:"id"`
	// Visibility is VisibilityUser for a skill of a user's own, in that user's Runtime (a face
	// sets it: see Runtime.VisibilityOf); empty for the tenant's.
	Visibility  access.Visibility `json:"visibility,omitempty"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Version     string            `json:"version,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Kind        spec.Kind         `json:"kind"`
	// Language is what runs an executable skill: wasm, python, javascript or typescript.
	Language spec.Language  `json:"language,omitempty"`
	Status   catalog.Status `json:"status"`
	// Error is why a broken skill is broken (every problem), as the caller chose to render it.
	Error string `json:"error,omitempty"`
	// Warnings are what the load repaired or found against the Agent Skills format in a skill
	// that loads regardless (see Skill.Warnings).
	Warnings []string `json:"warnings,omitempty"`
	// AllowedTools is the SKILL.md's allowed-tools (see Skill.AllowedTools).
	AllowedTools []string `json:"allowed_tools,omitempty"`
}

// Summary returns s's metadata. Error is every problem of a broken skill, each naming its file
// relative to the skills directory ("notes/skill.json"), never the host's layout: a summary goes
// to remote clients.
func (s *Skill) Summary() Summary {
	out := Summary{ID: s.ID(), Name: s.Name(), Description: s.Description(), Version: s.Version(), Kind: s.Kind(), Language: s.Language(), Status: s.Status(),
		Tags: s.Tags()}
	if s.Err() != nil {
		out.Error = strings.Join(s.Problems(), "; ")
	}
	out.Warnings, out.AllowedTools = s.Warnings(), s.AllowedTools()
	return out
}

// Problems lists a broken skill's problems as a remote client may see them: each file named
// relative to the skills directory ("notes/execute.wasm"), and the skill's directory on the host
// replaced by its name there wherever a message or hint names it. Err keeps the host's paths, for
// the operator's own tools.
func (s *Skill) Problems() []string {
	return s.in().RemoteProblems(s.Err())
}
