package runtime

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/spec"
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
}

// Summary returns s's metadata. Error is every problem of a broken skill, each naming its file
// relative to the skills directory ("notes/skill.json"), never the host's layout: a summary goes
// to remote clients.
func (s *Skill) Summary() Summary {
	out := Summary{ID: s.id, Name: s.Name(), Description: s.Description(), Version: s.Version(), Kind: s.kind, Language: s.Language(), Status: s.Status()}
	if s.manifest != nil {
		out.Tags = append([]string(nil), s.manifest.Tags...)
	}
	if s.Err() != nil {
		out.Error = strings.Join(s.Problems(), "; ")
	}
	out.Warnings = s.Warnings()
	return out
}

// Problems lists a broken skill's problems as a remote client may see them: each file named
// relative to the skills directory ("notes/execute.wasm"), and the skill's directory on the host
// replaced by its name there wherever a message or hint names it. Err keeps the host's paths, for
// the operator's own tools.
func (s *Skill) Problems() []string {
	return s.remoteProblems(s.Err())
}

// remoteProblems is err (a version's problems) as [Skill.Problems] words it.
func (s *Skill) remoteProblems(err error) []string {
	if err == nil {
		return nil
	}
	var se *spec.SkillError
	if !errors.As(err, &se) {
		return []string{hideDir(err.Error(), s.dir, s.dirName())}
	}
	rel := relativeProblems(se, s.dir, s.dirName())
	out := make([]string, len(rel.Problems))
	for i, p := range rel.Problems {
		out[i] = p.Error()
	}
	return out
}

// dirName is the name of s's directory in its skills directory: its id, unless the id was
// derived from it (see Skill.ID).
func (s *Skill) dirName() string {
	if s.dir == "" {
		return s.id
	}
	return filepath.Base(s.dir)
}

// relativeProblems rewrites the problems of the package in dir (named id in its skills
// directory) to name files as "<id>/<path>" and to say id wherever they named dir: what its
// author wrote, not where the host keeps it.
func relativeProblems(se *spec.SkillError, dir, id string) *spec.SkillError {
	out := &spec.SkillError{ID: se.ID}
	for _, p := range se.Problems {
		q := *p
		switch rel, err := filepath.Rel(dir, p.Path); {
		case err == nil && rel == ".":
			q.Path = id
		case err == nil && !strings.HasPrefix(rel, ".."):
			q.Path = id + "/" + filepath.ToSlash(rel)
		default:
			q.Path = hideDir(p.Path, dir, id)
		}
		q.Msg = hideDir(q.Msg, dir, id)
		q.Hint = hideDir(q.Hint, dir, id)
		out.Problems = append(out.Problems, &q)
	}
	return out
}

// hideDir replaces dir (as given, and absolute) in text by id.
func hideDir(text, dir, id string) string {
	if abs, err := filepath.Abs(dir); err == nil && abs != dir {
		text = strings.ReplaceAll(text, abs, id)
	}
	if dir != "" {
		text = strings.ReplaceAll(text, dir, id)
	}
	return text
}
