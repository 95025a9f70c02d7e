package runtime

import (
	"time"

	"github.com/skillbox-dev/skillbox/catalog"
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
	s := &Skill{id: want.ID, dir: want.Dir, kind: want.Kind,
		manifest: want.Manifest.Clone(), instructions: want.Instructions.Clone(), loadedAt: time.Now()}
	if want.Status != catalog.StatusUnchecked {
		s.checked.Store(&verdict{status: want.Status, err: want.Err})
	}
	if s.manifest != nil {
		params := s.manifest.Parameters
		if len(params) == 0 {
			params = []byte(`{"type":"object","properties":{},"additionalProperties":false}`)
		}
		schema, err := spec.CompileSchema(params)
		if err != nil {
			return nil, err
		}
		s.schema = schema
	}
	return s, nil
}
