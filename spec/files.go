package spec

import "slices"

// The files of a skill package, by the names the loader looks for.
const (
	// ModuleFile is a compiled skill's module.
	ModuleFile = "execute.wasm"
	// InstructionsFile is the name the Agent Skills format gives a skill's instructions. Any case
	// of it is read (a scan, `skillbox validate` and the faces agree on which file), with a
	// warning when it is not this one.
	InstructionsFile = "SKILL.md"
	// ScriptsDir holds a skill's programs (the Agent Skills format's scripts).
	ScriptsDir = "scripts"
	// ScriptsFile declares what a skill's programs ask for.
	ScriptsFile = ScriptsDir + "/skillbox.json"
	// MaxManifestBytes bounds a manifest.
	MaxManifestBytes = 1 << 20
)

// manifestNames are the names a manifest may have, JSON or YAML, in the order a scan looks.
var manifestNames = []string{"skill.json", "skill.yaml", "skill.yml"}

// ManifestFiles are the names a manifest may have, JSON or YAML, in the order a scan looks for
// them (a copy: a caller cannot change what the loader accepts).
func ManifestFiles() []string { return slices.Clone(manifestNames) }

// IsManifestFile reports whether name, a file at the top of a skill package, is a manifest.
func IsManifestFile(name string) bool { return slices.Contains(manifestNames, name) }
