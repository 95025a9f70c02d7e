package registry

// changedFrom reports whether s, just loaded, differs from prev, the skill of its id before.
// It reads nothing: the scan adopted the check of every skill whose files are as they were
// when last hashed, so a skill checked before and unchecked now has changed.
func (s *Skill) ChangedFrom(prev *Skill) bool {
	if s.dir != prev.dir || s.kind != prev.kind || s.manifestSum != prev.manifestSum ||
		(s.problems == nil) != (prev.problems == nil) {
		return true
	}
	pv, sv := prev.checked.Load(), s.checked.Load()
	switch {
	case pv != nil && sv != nil:
		return pv.Digest != sv.Digest
	case pv != nil:
		return true // its files are not what was hashed
	}
	return false // never checked: nothing to compare beyond the manifest
}
