package runtime

import (
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// SkillSpec describes a skill made without a package on disk, by [NewSkill].
type SkillSpec struct {
	ID     string
	Kind   spec.Kind
	Status catalog.Status
	// Err is why a StatusError skill is broken.
	Err error
	// Manifest is the executable skill's manifest; its Parameters give the argument schema (no
	// parameters: an empty object).
	Manifest *spec.Manifest
	// Instructions is a SKILL.md's frontmatter.
	Instructions *skillmd.Doc
	Dir          string
}

// NewSkill returns a Skill as want describes it, for tests of code that takes skills (catalogs,
// prompts, tool lists) without writing packages to disk. It has no module: a Runtime never runs
// it. want's Manifest and Instructions are copied.
func NewSkill(want SkillSpec) (*Skill, error) {
	s, err := registry.Described(want.ID, want.Dir, want.Kind, want.Manifest, want.Instructions, want.Status, want.Err)
	return view(s), err
}
