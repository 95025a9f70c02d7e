package toolset

import (
	"path/filepath"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
)

// ReadInstructions reads and parses the SKILL.md of s, body included: the one reader of a
// skill's instructions that load_skill, the HTTP face's instructions and the MCP face's prompts
// share. It reads the file as a resource of the skill (skillmd.ReadResource), so it gets the
// checks of any file a client asks for: a regular file inside the skill's directory, never a
// symlink out of it, at most max bytes (0: skillmd's default). Each face renders the body
// (skillmd.Render) for its own base directory ([BaseDir]) and arguments.
//
// # Errors
//
// A skill without a SKILL.md, or a file that cannot be read, gives a *skillmd.ResourceError
// (ErrNotFound, ErrDenied, ErrTooLarge, ...); a file that does not parse, skillmd.Parse's error,
// which names the file as <id>/SKILL.md.
func ReadInstructions(s *runtime.Skill, max int64) (*skillmd.Doc, error) {
	if s.InstructionsPath() == "" {
		return nil, &skillmd.ResourceError{Path: "SKILL.md", Kind: skillmd.ErrNotFound, Msg: "the skill has no SKILL.md"}
	}
	name := filepath.Base(s.InstructionsPath())
	data, err := skillmd.ReadResource(s.Dir(), name, max)
	if err != nil {
		return nil, err
	}
	return skillmd.Parse(s.ID()+"/"+name, data)
}
