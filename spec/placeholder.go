package spec

import (
	"strings"
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
func IsPlaceholder(text string) bool {
	return strings.Contains(strings.ToLower(text), ScaffoldMarker)
}

// placeholderHint is what a placeholder's warning asks for.
const PlaceholderHint = "replace it: a model reads it to choose the skill and fill in its arguments"
