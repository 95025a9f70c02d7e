// Package catalog is what a list of loaded skills offers a reader that does not run them: the
// load status of a skill, the read-only view of one (Skill), and where skills come from
// (Catalog). The runtime's skills are such views; tool definitions, search and prompts read
// them through this package, so they link no engine.
package catalog

import (
	"reflect"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// Skill is one loaded skill, seen read-only: *runtime.Skill is one. Its accessors hand out
// copies, so no reader changes what another, or a run, sees.
type Skill interface {
	ID() string
	Kind() spec.Kind
	// Status is whether it loaded; Err why not, for a broken one.
	Status() Status
	Err() error
	Name() string
	Description() string
	Tags() []string
	// ModelInvocable is false for a skill whose instructions say a model may not call it.
	ModelInvocable() bool
	// Manifest and Schema are nil for an instruction skill and a broken manifest.
	Manifest() *spec.Manifest
	Schema() *spec.Schema
	// Grant is what its runs may do, without the host side.
	Grant() *policy.Grant
	// ModuleHash is the hex sha256 of its code, "" before it is checked.
	ModuleHash() string
	// Digest is its version's identity, "sha256:<hex>" over its whole tree: what a run pins.
	Digest() string
	// Instructions is its SKILL.md's frontmatter, nil without one.
	Instructions() *skillmd.Doc
}

// Catalog is where skills come from: *runtime.Runtime (a Catalog[*runtime.Skill]), or a
// filtered view of one.
type Catalog[S Skill] interface {
	// Skills are the loaded skills, sorted by id.
	Skills() []S
}

// Present reports whether s is a skill: not nil, nor a nil pointer in the interface. A reader of
// a catalog skips what is not.
func Present(s Skill) bool {
	if s == nil {
		return false
	}
	v := reflect.ValueOf(s)
	return v.Kind() != reflect.Pointer || !v.IsNil()
}
