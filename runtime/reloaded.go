package runtime

import (
	"slices"

	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// Reloaded is what a reload changed, for the log and for Config.OnReload: an operator who
// edits a skill under `skillbox serve --watch` sees that the edit was picked up, or why the
// skill is now broken.
type Reloaded struct {
	// Count is how many skills there are now.
	Count int
	// Added, Changed and Removed are skill ids, sorted. A skill is changed when its manifest or,
	// once known, the digest of its files differs from the one it replaces.
	Added, Changed, Removed []string
	// Broken are the skills added or changed that are broken, with why.
	Broken []BrokenSkill
}

// BrokenSkill is a skill that cannot run, and why.
type BrokenSkill struct {
	ID     string
	Reason string
}

// Empty reports whether the reload changed nothing.
func (r Reloaded) Empty() bool {
	return len(r.Added)+len(r.Changed)+len(r.Removed) == 0
}

// diffRegistries says what changed from old to cur.
func diffRegistries(old, cur *registry.Set) Reloaded {
	r := Reloaded{Count: len(cur.Order)}
	for _, s := range cur.Order {
		prev, ok := old.ByID[s.ID()]
		switch {
		case !ok:
			r.Added = append(r.Added, s.ID())
		case s.ChangedFrom(prev):
			r.Changed = append(r.Changed, s.ID())
		default:
			continue
		}
		if s.LoadProblems() != nil {
			r.Broken = append(r.Broken, BrokenSkill{ID: s.ID(), Reason: s.LoadProblems().Error()})
		}
	}
	for _, s := range old.Order {
		if _, ok := cur.ByID[s.ID()]; !ok {
			r.Removed = append(r.Removed, s.ID())
		}
	}
	slices.Sort(r.Added)
	slices.Sort(r.Changed)
	slices.Sort(r.Removed)
	return r
}

// changes is the generation of the registry a run's skill was looked up in, for reloadChanged.
func (rt *Runtime) changes() uint64 {
	if rt.parent != nil {
		return rt.parent.generation.Load()
	}
	return rt.generation.Load()
}

// reloadChanged rescans the skill directories for a run that found its skill changed on disk
// since it was loaded (seen is changes() before it looked): the runs that notice together share
// one rescan, and none is made when one was since. A user's view rescans through its tenant.
func (rt *Runtime) reloadChanged(seen uint64) {
	root := rt
	if rt.parent != nil {
		root = rt.parent
	}
	root.reloadMu.Lock()
	defer root.reloadMu.Unlock()
	if root.generation.Load() != seen {
		return
	}
	root.logger.Info("a skill changed on disk since it was loaded: reloading")
	root.rescan()
}
