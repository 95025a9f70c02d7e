package runtime

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// A Runtime can lie over another (Config.Under): its registry is its own skill directories over
// the other's registry, whose Skills it serves as they are, loaded and checked once however many
// Runtimes lie over it. A server whose tenants share the operator's skills makes each tenant's
// Runtime over the operator's, as a user's view lies over its tenant's (see newUserView): the
// shared directories are scanned once, not once a tenant.

// below is the Runtime whose registry lies under rt's, if any: a user's tenant, or Config.Under.
func (rt *Runtime) below() *Runtime {
	if rt.parent != nil {
		return rt.parent
	}
	return rt.cfg.Under
}

// ownDirs are the directories rt scans itself: a user's own directory for a user's view (the
// tenant's are the tenant's), all of SkillDirs otherwise.
func (rt *Runtime) ownDirs() []string {
	if rt.parent != nil {
		return rt.cfg.SkillDirs[:1]
	}
	return rt.cfg.SkillDirs
}

// checkUnder checks a Config.Under: it serves its skills under its own policy, so the Runtime
// over it has no policy of its own, and it must be a tenant's Runtime (not a user's view).
func (cfg *Config) checkUnder() error {
	u := cfg.Under
	switch {
	case u == nil:
		return nil
	case cfg.Policy != nil || cfg.PolicyFile != "":
		return errors.New("runtime: Config.Under grants its skills under its own policy, so a Runtime over it takes that policy: leave Policy and PolicyFile unset, or list Under's directories in SkillDirs to scan them under a policy of its own")
	case u.parent != nil:
		return fmt.Errorf("runtime: Config.Under is user %q's view; give its tenant's Runtime", u.user)
	case u.cfg.Under != nil:
		return errors.New("runtime: Config.Under lies over another Runtime itself: give the one at the bottom")
	}
	return nil
}

// lieOver registers rt over u: u's scans rescan rt after u's own, under u's policy. u is scanned
// first, so rt's first scan finds u's registry (a scan takes u's reloadMu, then rt's: never the
// other way round).
func (rt *Runtime) lieOver(u *Runtime) {
	u.registry()
	rt.policy.Store(u.policy.Load())
	u.usersMu.Lock()
	u.over = append(u.over, rt)
	u.usersMu.Unlock()
}

// leaveUnder forgets rt in the Runtime it lies over.
func (rt *Runtime) leaveUnder() {
	u := rt.cfg.Under
	if u == nil {
		return
	}
	u.usersMu.Lock()
	u.over = slices.DeleteFunc(u.over, func(o *Runtime) bool { return o == rt })
	u.usersMu.Unlock()
}

// rescanAbove rescans, under rt's policy, every registry laid over rt's: its users' views and
// the Runtimes over it (Config.Under). One never scanned scans when first asked. The caller holds
// rt.reloadMu; none of those takes it while holding its own.
func (rt *Runtime) rescanAbove() {
	rt.usersMu.Lock()
	above := slices.AppendSeq(slices.Clone(rt.over), maps.Values(rt.users))
	rt.usersMu.Unlock()
	p := rt.policy.Load()
	for _, o := range above {
		o.reloadMu.Lock()
		o.policy.Store(p)
		if o.reg.Load() != nil {
			o.rescan()
		}
		o.reloadMu.Unlock()
	}
}
