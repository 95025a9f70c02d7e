package runtime

import (
	"time"

	"github.com/skillbox-dev/skillbox/skillmd"
)

// SkillSpec describes a skill made without a package on disk, by [NewSkill].
type SkillSpec struct {
	ID     string
	Kind   Kind
	Status Status
	// Err is why a StatusError skill is broken.
	Err error
	// Manifest is the executable skill's manifest; its Parameters give the argument schema (no
	// parameters: an empty object).
	Manifest *Manifest
	// Instructions is a SKILL.md's frontmatter.
	Instructions *skillmd.Doc
	Dir          string
}

// NewSkill returns a Skill as spec describes it, for tests of code that takes skills (catalogs,
// prompts, tool lists) without writing packages to disk. It has no module: a Runtime never runs
// it. The spec's Manifest and Instructions are copied.
func NewSkill(spec SkillSpec) (*Skill, error) {
	s := &Skill{id: spec.ID, dir: spec.Dir, kind: spec.Kind,
		manifest: spec.Manifest.Clone(), instructions: spec.Instructions.Clone(), loadedAt: time.Now()}
	if spec.Status != StatusUnchecked {
		s.checked.Store(&verdict{status: spec.Status, err: spec.Err})
	}
	if s.manifest != nil {
		params := s.manifest.Parameters
		if len(params) == 0 {
			params = []byte(`{"type":"object","properties":{},"additionalProperties":false}`)
		}
		schema, err := compileSchema(params)
		if err != nil {
			return nil, err
		}
		s.schema = schema
	}
	return s, nil
}
