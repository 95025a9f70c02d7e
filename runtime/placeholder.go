package runtime

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/skillbox-dev/skillbox/spec"
)

// ScaffoldMarker is in every text skillbox new writes where only the skill's author can say what
// is true: the descriptions a model reads to pick a skill and fill in its arguments. A
// description that still holds it is a placeholder left in, and a warning of the skill (it
// loads and runs regardless) until it is replaced.
const ScaffoldMarker = "written by skillbox new"

// The placeholder texts skillbox new writes; each holds ScaffoldMarker. They are YAML-safe as
// plain scalars (no ": " and no " #"), for SKILL.md's frontmatter.
const (
	// PlaceholderDescription is skill.json's description.
	PlaceholderDescription = "Greets someone by name. (" + ScaffoldMarker + "; replace it with what the skill does, for the model that picks it.)"
	// PlaceholderParamDescription is the description of the parameter skillbox new declares.
	PlaceholderParamDescription = "Who to greet. (" + ScaffoldMarker + "; replace it with what the argument is.)"
	// PlaceholderInstructionsDescription is SKILL.md's description.
	PlaceholderInstructionsDescription = "Greets someone by name. (" + ScaffoldMarker + "; replace it with when and why a model should use the skill.)"
)

// isPlaceholder reports whether text is a placeholder skillbox new wrote and nobody replaced.
func isPlaceholder(text string) bool {
	return strings.Contains(strings.ToLower(text), ScaffoldMarker)
}

// placeholderHint is what a placeholder's warning asks for.
const placeholderHint = "replace it: a model reads it to choose the skill and fill in its arguments"

// warnPlaceholders warns of each description of m (path) that is still a placeholder.
func (s *Skill) warnPlaceholders(path string, m *spec.Manifest) {
	if isPlaceholder(m.Description) {
		s.warn(&spec.ManifestError{Path: path, Field: "description", Msg: "is the placeholder skillbox new wrote", Hint: placeholderHint})
	}
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(m.Parameters, &schema) != nil {
		return
	}
	names := make([]string, 0, len(schema.Properties))
	for name, p := range schema.Properties {
		if isPlaceholder(p.Description) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		s.warn(&spec.ManifestError{Path: path, Field: "parameters." + name + ".description", Msg: "is the placeholder skillbox new wrote", Hint: placeholderHint})
	}
}
