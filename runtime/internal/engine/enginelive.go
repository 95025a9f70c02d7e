package engine

// The engine's live sets as lazy checking and shared engines need them: a scan no longer knows
// every module's hash (see StatusUnchecked), so it keeps what was live for the skills it has not
// checked, and each check adds the hash it found; and several Runtimes may share one engine (see
// runtime.Shared), each with its own registry, so a module is live while any of them has it.

// Owner is one owner of a live set: a Runtime. Join hands it out, and the engine knows it
// by its address (a byte, so that two owners never share one).
type Owner struct{ _ byte }

// isLive reports whether some owner keeps hash live: one that has not retained
// yet keeps everything, and an engine no Runtime uses yet does too. e.mu is held.
func (e *Engine) isLive(hash string) bool {
	if len(e.lives) == 0 {
		return true
	}
	for _, live := range e.lives {
		if live == nil || live[hash] {
			return true
		}
	}
	return false
}

// Join registers a new owner, a Runtime whose registry is not scanned yet: until it retains,
// every module is live for it.
func (e *Engine) Join() *Owner {
	owner := new(Owner)
	e.mu.Lock()
	e.lives[owner] = nil
	e.mu.Unlock()
	return owner
}

// Leave forgets owner's live set, and drops the modules only it kept (a tenant's Runtime that
// closes while the others go on).
func (e *Engine) Leave(owner *Owner) {
	e.mu.Lock()
	delete(e.lives, owner)
	last := len(e.lives) == 0
	e.mu.Unlock()
	if !last { // the last one: the Shared's Close drops everything
		e.dropDead()
	}
}

// LiveHashes returns a copy of the hashes owner keeps compiled modules of (nil: all, as before
// its first retain).
func (e *Engine) LiveHashes(owner *Owner) map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	live := e.lives[owner]
	if live == nil {
		return nil
	}
	out := make(map[string]bool, len(live))
	for h := range live {
		out[h] = true
	}
	return out
}

// KeepLive adds hash to owner's live set, so that a module a check found for its current
// registry is kept compiled, not closed after its first run as one no version uses.
func (e *Engine) KeepLive(owner *Owner, hash string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if live := e.lives[owner]; live != nil {
		live[hash] = true
	}
}
