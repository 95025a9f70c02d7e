package runtime

// The engine's live set as lazy checking needs it: a scan no longer knows every module's hash
// (see StatusUnchecked), so it keeps what was live for the skills it has not checked, and each
// check adds the hash it found.

// liveHashes returns a copy of the hashes the engine keeps compiled modules of (nil: all, as
// before the first retain).
func (e *engine) liveHashes() map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.live == nil {
		return nil
	}
	out := make(map[string]bool, len(e.live))
	for h := range e.live {
		out[h] = true
	}
	return out
}

// keepLive adds hash to the live set, so that a module a check found for the current registry
// is kept compiled, not closed after its first run as one no version uses.
func (e *engine) keepLive(hash string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.live != nil {
		e.live[hash] = true
	}
}
