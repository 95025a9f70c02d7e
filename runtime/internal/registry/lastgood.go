package registry

import (
	"sync/atomic"

	"github.com/skillbox-dev/skillbox/catalog"
)

// lastGood is the version of a skill that served before this one was loaded, checked and
// sound, kept so that a new version found broken is logged and the old one goes on serving.
// The chain is one long: linking a new version cuts the old one's own link.
type lastGood struct {
	prev     atomic.Pointer[Skill]
	reported atomic.Bool // the fallback was logged once
}

// LastGood returns the version that served before s, when s's own check failed and that one
// was sound: what runs instead of a broken s. Nil otherwise.
func (s *Skill) LastGood() *Skill { return s.lastGood.prev.Load() }

// ReportFallback says whether this is the first time s falls back to its last good version (to
// log it once).
func (s *Skill) ReportFallback() bool { return !s.lastGood.reported.Swap(true) }

// LinkLastGood links every skill of r to the sound version with its id in old (the one old
// had, or the one that one fell back to), unless they are the same content. Call it before r
// serves, and only when r was scanned under the policy old was: a version's grant is its
// policy's, and a policy that changed must not keep an old grant serving.
func LinkLastGood(r, old *Set) {
	if r == nil || old == nil {
		return
	}
	for id, n := range r.ByID {
		o := old.ByID[id]
		if o == nil || o == n {
			continue
		}
		good := o
		if o.State().Status != catalog.StatusActive {
			good = o.LastGood()
		}
		if good == nil || good.State().Status != catalog.StatusActive || good.State().Digest == n.State().Digest && n.State().Digest != "" {
			continue
		}
		n.lastGood.prev.Store(good)
		good.lastGood.prev.Store(nil) // one link: the chain never grows
	}
}

// LastGoodHashes adds the module hashes of r's last good versions to keep: their modules stay
// compiled while they may serve.
func LastGoodHashes(r *Set, keep map[string]bool) {
	for _, s := range r.Order {
		if g := s.LastGood(); g != nil && g.State().Hash != "" {
			keep[g.State().Hash] = true
		}
	}
}
