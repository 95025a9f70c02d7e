package registry

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/skillbox-dev/skillbox/spec"
)

// remoteProblems is err (a version's problems) as [Skill.Problems] words it.
func (s *Skill) RemoteProblems(err error) []string {
	if err == nil {
		return nil
	}
	var se *spec.SkillError
	if !errors.As(err, &se) {
		return []string{hideDir(err.Error(), s.dir, s.dirName())}
	}
	rel := RelativeProblems(se, s.dir, s.dirName())
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
func RelativeProblems(se *spec.SkillError, dir, id string) *spec.SkillError {
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
