package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// Installs tells the replicas of one Skillbox what each installs and removes, so that a skill
// uploaded to one (an upload, a bundle, an agent's skill) serves from all. It carries pointers
// (a skill is at a digest, or removed), never files: every replica unpacks the files of that
// version from the version store (Config.Versions), which all of them share. The cluster's
// *cluster.Node implements it; the runtime never links NATS.
//
// A skill is named by its tenant, its scope ("" for the tenant's own skills, a user's scope,
// access.UserScope, for a user's own) and its id.
type Installs interface {
	// AnnounceInstall says skill is at digest now, or removed when digest is "". It returns the
	// note's revision, which grows with every note.
	AnnounceInstall(ctx context.Context, tenant, scope, skill, digest string) (rev uint64, err error)
	// InstalledDigest returns the digest last announced for skill ("" once removed); found is
	// false when none was.
	InstalledDigest(ctx context.Context, tenant, scope, skill string) (digest string, found bool, err error)
	// FollowInstalls calls apply for every skill of tenant announced so far, then for every new
	// note, one at a time and in order, until ctx ends or it fails.
	FollowInstalls(ctx context.Context, tenant string, apply func(scope, skill, digest string, rev uint64)) error
}

// Bounds of the work of sharing installs.
const (
	// announceTimeout bounds telling the others of an install before the install returns; a
	// note not told by then is told again every installRetry.
	announceTimeout = 5 * time.Second
	// catchUpTimeout bounds what a run of a skill this replica does not know waits to learn
	// whether another replica installed it: one read of the notes, and of the store's files.
	catchUpTimeout = 10 * time.Second
	// installRetry is how often notes not yet told, and notes not yet applied (the store could
	// not be read), are tried again; also the pause before following again after a failure.
	installRetry = time.Second
)

// sharedInstalls is a tenant's Runtime's part in sharing installs (see ShareInstalls).
type sharedInstalls struct {
	ins  Installs
	done sync.WaitGroup

	mu sync.Mutex
	// told is the revision of the last note this replica told of each skill: an older note of
	// it, from the watch, is not applied over what this replica installed since.
	told map[string]uint64
	// untold are the notes this replica failed to tell; unapplied, those it failed to apply.
	untold    map[string]installNote
	unapplied map[string]installNote
}

// installNote is one skill's note: scope, id and digest ("": removed).
type installNote struct {
	scope, skill, digest string
	rev                  uint64
}

func (n installNote) key() string { return n.scope + "/" + n.skill }

// ShareInstalls makes rt one of the replicas ins connects: what rt installs or removes (Install,
// Remove, an agent's skill, in the tenant's skills or a user's own) is told through ins, and
// what any replica tells is installed here, from the version store, then checked and compiled
// in the background. A run of a skill not known here asks ins first (see catchUp). Call it
// once, before serving, on a tenant's Runtime with a version store and a skill directory.
func (rt *Runtime) ShareInstalls(ins Installs) error {
	switch {
	case rt.parent != nil:
		return errors.New("runtime: ShareInstalls is for a tenant's Runtime, not a user's view")
	case rt.versions == nil || len(rt.cfg.SkillDirs) == 0:
		return errors.New("runtime: sharing installs needs a version store (Config.Versions) and a skill directory: the others unpack the files from the store")
	}
	sh := &sharedInstalls{ins: ins, told: map[string]uint64{}, untold: map[string]installNote{}, unapplied: map[string]installNote{}}
	if !rt.installs.CompareAndSwap(nil, sh) {
		return errors.New("runtime: ShareInstalls was called already")
	}
	sh.done.Add(2)
	go func() { defer sh.done.Done(); rt.followInstalls(sh) }()
	go func() { defer sh.done.Done(); rt.retryInstalls(sh) }()
	return nil
}

// followInstalls applies every note ins tells, following again after a failure, until rt closes.
func (rt *Runtime) followInstalls(sh *sharedInstalls) {
	for {
		err := sh.ins.FollowInstalls(rt.closing, rt.cfg.Tenant, func(scope, skill, digest string, rev uint64) {
			rt.applyNote(sh, installNote{scope: scope, skill: skill, digest: digest, rev: rev})
		})
		if !sleepCtx(rt.closing, installRetry) {
			return
		}
		rt.logger.Warn("installs: following the other replicas' installs failed; following again", "err", err)
	}
}

// applyNote applies n unless this replica told a later note of its skill.
func (rt *Runtime) applyNote(sh *sharedInstalls, n installNote) {
	sh.mu.Lock()
	older := n.rev < sh.told[n.key()]
	sh.mu.Unlock()
	if older {
		return
	}
	err := rt.applyInstall(rt.closing, n.scope, n.skill, n.digest)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err != nil && rt.closing.Err() == nil {
		rt.logger.Error("installs: another replica's install cannot be applied here yet; trying again", "skill", n.skill, "scope", n.scope, "digest", n.digest, "err", err)
		sh.unapplied[n.key()] = n
		return
	}
	if u, ok := sh.unapplied[n.key()]; ok && u.rev <= n.rev {
		delete(sh.unapplied, n.key())
	}
}

// retryInstalls tells the notes not yet told and applies those not yet applied, every
// installRetry, until rt closes.
func (rt *Runtime) retryInstalls(sh *sharedInstalls) {
	for sleepCtx(rt.closing, installRetry) {
		sh.mu.Lock()
		untold := make([]installNote, 0, len(sh.untold))
		for _, n := range sh.untold {
			untold = append(untold, n)
		}
		unapplied := make([]installNote, 0, len(sh.unapplied))
		for _, n := range sh.unapplied {
			unapplied = append(unapplied, n)
		}
		sh.mu.Unlock()
		for _, n := range untold {
			rt.tell(rt.closing, sh, n)
		}
		for _, n := range unapplied {
			rt.applyNote(sh, n)
		}
	}
}

// tell tells the others of n, or keeps it for retryInstalls.
func (rt *Runtime) tell(ctx context.Context, sh *sharedInstalls, n installNote) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), announceTimeout)
	rev, err := sh.ins.AnnounceInstall(tctx, rt.cfg.Tenant, n.scope, n.skill, n.digest)
	cancel()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if cur, ok := sh.untold[n.key()]; ok && cur.digest != n.digest {
		return // a later note of the skill is waiting: it is told next
	}
	if err != nil {
		if _, ok := sh.untold[n.key()]; !ok {
			rt.logger.Error("installs: the other replicas cannot be told of an install yet; trying again", "skill", n.skill, "scope", n.scope, "err", err)
		}
		sh.untold[n.key()] = n
		return
	}
	delete(sh.untold, n.key())
	sh.told[n.key()] = rev
}

// announce tells the other replicas that rt now holds skill id at digest ("": removed), when
// installs are shared. A note that cannot be told now is told later: the install stands.
func (rt *Runtime) announce(ctx context.Context, id, digest string) {
	root, scope := rt.installRoot()
	sh := root.installs.Load()
	if sh == nil {
		return
	}
	n := installNote{scope: scope, skill: id, digest: digest}
	sh.mu.Lock()
	if _, ok := sh.untold[n.key()]; ok {
		sh.untold[n.key()] = n // an earlier note waits: this one replaces it, told in order
		sh.mu.Unlock()
		return
	}
	sh.mu.Unlock()
	root.tell(ctx, sh, n)
}

// installRoot is the tenant's Runtime that shares rt's installs, and rt's scope: "" for the
// tenant's, a user's scope for a user's view.
func (rt *Runtime) installRoot() (*Runtime, string) {
	if rt.parent != nil {
		return rt.parent, filepath.Base(rt.userDir)
	}
	return rt, ""
}

// catchUp asks the other replicas whether one installed skill id, which rt does not know, and
// installs it here from the version store if one did: a run sent to this replica just after an
// install elsewhere does not wait for the note. It reports whether it installed it.
func (rt *Runtime) catchUp(ctx context.Context, id string) bool {
	root, scope := rt.installRoot()
	sh := root.installs.Load()
	if sh == nil || !spec.ValidID(id) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
	defer cancel()
	scopes := []string{""}
	if scope != "" {
		scopes = []string{scope, ""} // the user's own first, as a user's view finds them
	}
	for _, sc := range scopes {
		digest, found, err := sh.ins.InstalledDigest(ctx, root.cfg.Tenant, sc, id)
		if err != nil {
			rt.logger.Warn("installs: cannot ask the other replicas for a skill not known here", "skill", id, "err", err)
			return false
		}
		if !found || digest == "" {
			continue
		}
		if err := root.applyInstall(ctx, sc, id, digest); err != nil {
			rt.logger.Error("installs: a skill another replica installed cannot be installed here", "skill", id, "digest", digest, "err", err)
			return false
		}
		// The directory holds it; the registry may not yet: the note's own apply swaps the
		// directory in, then rescans, under reloadMu, and applyInstall returns at once when the
		// directory holds the digest. Past the lock that apply has rescanned; if it has not,
		// rescan here.
		if _, ok := rt.lookup(id); !ok {
			root.reloadMu.Lock()
			if _, ok := rt.lookup(id); !ok {
				root.rescan()
			}
			root.reloadMu.Unlock()
		}
		return true
	}
	return false
}

// applyInstall makes the skill directory hold skill id (of scope) at digest, unpacked from the
// version store and checked against the digest, or removes it when digest is "". It is what
// Install and Remove did on another replica, without their checks of who may: that replica made
// them, and the version store holds the version as it recorded it.
func (rt *Runtime) applyInstall(ctx context.Context, scope, id, digest string) error {
	if !spec.ValidID(id) || (scope != "" && !validScope(scope)) {
		return fmt.Errorf("%q (scope %q) is no skill id", id, scope)
	}
	root, key := rt.cfg.SkillDirs[0], id
	if scope != "" {
		root, key = filepath.Join(root, usersDir, scope), id+"@"+scope
	}
	final := filepath.Join(root, id)
	if digest == "" {
		rt.reloadMu.Lock()
		defer rt.reloadMu.Unlock()
		if _, err := os.Stat(final); err != nil {
			return nil // not here
		}
		trash, err := discard(root, id)
		if err != nil {
			return err
		}
		rt.rescan()
		rt.logger.Info("skill removed, as another replica did", "skill", id, "scope", scope)
		return os.RemoveAll(trash)
	}
	if holds(final, digest) {
		return nil
	}
	v, err := rt.versions.store.Version(ctx, key, digest)
	if err != nil {
		return fmt.Errorf("read version %s of %s: %w", short(digest), key, err)
	}
	files, err := rt.versions.store.VersionFiles(ctx, key, digest)
	if err != nil {
		return fmt.Errorf("read the files of version %s of %s: %w", short(digest), key, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	staging, err := os.MkdirTemp(root, "."+id+".staging-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staging)
	check := filepath.Join(staging, id)
	if err := os.Mkdir(check, 0o755); err != nil {
		return err
	}
	if err := writeTree(check, files); err != nil {
		return err
	}
	if v.Source == "agent" {
		// Still an agent's skill here: held to the agents' ceiling until an admin approves it.
		if err := writeAuthorship(check, authorship{By: "agent", Caller: v.CreatedBy, Created: v.CreatedAt}); err != nil {
			return err
		}
	}
	if !holds(check, digest) {
		return fmt.Errorf("the stored files of %s are not version %s: the store was changed outside skillbox", key, short(digest))
	}
	rt.reloadMu.Lock()
	defer rt.reloadMu.Unlock()
	if holds(final, digest) { // a run's catch-up and the note raced: one installs it
		return nil
	}
	if err := swapIn(check, final, staging); err != nil {
		return err
	}
	rt.rescan() // and the background check compiles it, before its first run here
	rt.logger.Info("skill installed, as another replica did", "skill", id, "scope", scope, "digest", digest)
	return nil
}

// holds reports whether dir holds a skill package at digest.
func holds(dir, digest string) bool {
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	t, err := (*registry.Digester)(nil).Walk(dir, false)
	return err == nil && t.Digest == digest
}

// validScope reports whether scope is a user's scope as access.UserScope makes it.
func validScope(scope string) bool {
	if len(scope) != 16 {
		return false
	}
	for _, r := range scope {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// sleepCtx waits d, or until ctx ends: false then.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
