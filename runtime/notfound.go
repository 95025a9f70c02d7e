package runtime

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/nearest"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// Absence says why a skill asked for cannot run: none has its id, it is broken, or it is read
// rather than run.
type Absence int

const (
	// Missing: no skill has the id.
	Missing Absence = iota + 1
	// Broken: the skill exists but its package is invalid (NotFoundError.Err says why).
	Broken
	// InstructionsOnly: the skill has a SKILL.md and no code; a model reads it, nothing runs it.
	InstructionsOnly
)

func (a Absence) String() string {
	switch a {
	case Missing:
		return "missing"
	case Broken:
		return "broken"
	case InstructionsOnly:
		return "instructions_only"
	}
	return fmt.Sprintf("Absence(%d)", int(a))
}

// NotFoundError is why skill ID cannot be looked up or run: the cause of a not_found [*run.Error],
// reached with errors.As. It matches [ErrBroken] (Broken) and [ErrNotExecutable] (InstructionsOnly)
// with errors.Is.
//
// It holds two messages, and this is the one place that draws the line between them: Error is the
// operator's and names the skills directories searched and the broken package's files by their host
// paths; [NotFoundError.ClientMessage] is a remote client's (the run.Error's Message) and names ids
// only, never a path of the host.
type NotFoundError struct {
	ID     string
	Absent Absence
	// Dirs are the skills directories searched, as the operator configured them.
	Dirs []string
	// Nearest are the ids most like ID (an edit or two away, or ID a prefix of them), best first,
	// at most maxNearest; for a Missing skill only.
	Nearest []string
	// Err is, for a Broken skill, every problem of its package (host paths included).
	Err error
	// problems are Err's problems as a remote client may read them (see Skill.Problems).
	problems []string
}

// maxNearest bounds the ids a NotFoundError suggests.
const maxNearest = 3

func (e *NotFoundError) Error() string {
	switch e.Absent {
	case Broken:
		var se *spec.SkillError
		if errors.As(e.Err, &se) {
			msgs := make([]string, len(se.Problems))
			for i, p := range se.Problems {
				msgs[i] = p.Error()
			}
			return fmt.Sprintf("skill %q is broken: %s", e.ID, strings.Join(msgs, "; "))
		}
		return fmt.Sprintf("skill %q is broken: %v", e.ID, e.Err)
	case InstructionsOnly:
		return e.ClientMessage()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no skill %q", e.ID)
	if len(e.Dirs) == 0 {
		b.WriteString(" (no skills directory is configured)")
	} else {
		fmt.Fprintf(&b, " in %s", strings.Join(e.Dirs, ", "))
	}
	b.WriteString(didYouMean(e.Nearest))
	return b.String()
}

// ClientMessage is the error in words a remote client may read: the id, the nearest ids and the
// broken package's problems named relative to its skills directory; no directory of the host.
func (e *NotFoundError) ClientMessage() string {
	switch e.Absent {
	case Broken:
		return fmt.Sprintf("skill %q is broken: %s", e.ID, strings.Join(e.problems, "; "))
	case InstructionsOnly:
		return fmt.Sprintf("skill %q has instructions only (a SKILL.md, no code): it is read, not run; read it with skillbox instructions %s, or a model with load_skill", e.ID, e.ID)
	}
	return fmt.Sprintf("no skill %q", e.ID) + didYouMean(e.Nearest)
}

// Is matches ErrBroken for a broken skill and ErrNotExecutable for an instruction-only one.
func (e *NotFoundError) Is(target error) bool {
	return (target == run.ErrBroken && e.Absent == Broken) || (target == run.ErrNotExecutable && e.Absent == InstructionsOnly)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// didYouMean is "; did you mean a, b or c?", or "" for no ids.
func didYouMean(ids []string) string {
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + ids[0] + "?"
	}
	return "; did you mean " + strings.Join(ids[:len(ids)-1], ", ") + " or " + ids[len(ids)-1] + "?"
}

// runError is e as a failed run: kind not_found, the client's message, e the cause.
func (e *NotFoundError) runError() *run.Error {
	return &run.Error{Kind: run.KindNotFound, Skill: e.ID, Message: e.ClientMessage(), Err: e}
}

// missing is the error for id when no skill has it.
func (rt *Runtime) missing(id string) *run.Error {
	return (&NotFoundError{ID: id, Absent: Missing, Dirs: append([]string(nil), rt.cfg.SkillDirs...), Nearest: nearestIDs(id, rt.knownIDs())}).runError()
}

// brokenErr is the error for s, whose version is broken with err.
func brokenErr(s *registry.Skill, err error) *run.Error {
	return (&NotFoundError{ID: s.ID(), Absent: Broken, Err: err, problems: s.RemoteProblems(err)}).runError()
}

// knownIDs are the ids there are: the registry's, or before the first scan the ids the skills
// directories' subdirectories name (a scan would load every package to tell more, and an unknown
// id is no reason to).
func (rt *Runtime) knownIDs() []string {
	if r := rt.reg.Load(); r != nil {
		ids := make([]string, len(r.Order))
		for i, s := range r.Order {
			ids[i] = s.ID()
		}
		return ids
	}
	var ids []string
	for _, root := range rt.cfg.SkillDirs {
		subs, _ := registry.PackageCandidates(root)
		for _, sub := range subs {
			name := filepath.Base(sub)
			if !spec.ValidID(name) {
				name = registry.DerivedID(name)
			}
			if name != "" {
				ids = append(ids, name)
			}
		}
	}
	return ids
}

// nearDistance is how many edits apart an id may be from the one asked for, of n bytes, and
// still be suggested: one for a short id (two edits make "nope" of "notes"), two from six bytes.
func nearDistance(n int) int {
	if n < 6 {
		return 1
	}
	return 2
}

// nearestIDs returns the ids most like id, best first (fewest edits, then a prefix match, then
// by id), at most maxNearest. The work is bounded: an id asked for longer than any valid id
// gets no suggestion, and a candidate whose length alone puts it too far is not compared.
func nearestIDs(id string, ids []string) []string {
	if id == "" || len(id) > spec.MaxIDLen+1 {
		return nil
	}
	want := strings.ToLower(id)
	type near struct {
		id   string
		dist int
	}
	var found []near
	far := nearDistance(len(want))
	for _, c := range ids {
		if c == id {
			continue
		}
		d := far + 1
		if lc := len(c) - len(want); lc <= far && lc >= -far {
			d = nearest.Distance(want, c)
		}
		if d > far && len(want) >= 3 && (strings.HasPrefix(c, want) || strings.HasPrefix(want, c)) {
			d = far + 1 // a prefix: after every close typo
		} else if d > far {
			continue
		}
		found = append(found, near{c, d})
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].dist != found[j].dist {
			return found[i].dist < found[j].dist
		}
		return found[i].id < found[j].id
	})
	out := make([]string, 0, min(len(found), maxNearest))
	for _, f := range found[:min(len(found), maxNearest)] {
		out = append(out, f.id)
	}
	return out
}
