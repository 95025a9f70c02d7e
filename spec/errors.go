package spec

import (
	"errors"
	"fmt"
	"strings"
)

// ManifestError is one problem in one file of a skill package: the file, the field (a JSON
// pointer-ish dotted path such as "parameters.size.type"), what is wrong and how to fix it.
type ManifestError struct {
	Path string // the file, as given to the loader
	// Line and Column place a syntax error in the file (1-based; Column in characters); zero
	// otherwise.
	Line, Column int
	Field        string // empty when the problem is the file as a whole
	Msg          string
	Hint         string
}

// Error is "path[:line:column][: field]: msg[ (hint)]".
func (e *ManifestError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// ErrInvalidSkill is matched by every [*SkillError].
var ErrInvalidSkill = errors.New("invalid skill")

// SkillError holds every problem found in one skill package, so an author fixes them in one pass
// instead of one per attempt.
type SkillError struct {
	ID       string
	Problems []*ManifestError
}

func (e *SkillError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return fmt.Sprintf("skill %q is invalid: %s", e.ID, strings.Join(msgs, "; "))
}

func (e *SkillError) Is(target error) bool { return target == ErrInvalidSkill }

// Unwrap exposes each problem to errors.As.
func (e *SkillError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}
