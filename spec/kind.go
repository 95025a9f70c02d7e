package spec

// Kind says what a skill is for.
type Kind string

const (
	// Executable skills have a manifest and a module, and can be run.
	Executable Kind = "executable"
	// Instructions skills have only a SKILL.md: they are listed and read, never run.
	Instructions Kind = "instructions"
)
