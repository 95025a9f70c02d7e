package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/version"
)

// With a version.Store (Config.Versions), every content of a skill the runtime meets — in a skill
// directory, installed, uploaded, written by an agent — is recorded as an immutable version,
// its files kept in the store, and runs go through pick:
//
//   - by id, the skill's active version runs; a skill with none runs its current version (the one
//     in its directory) while that is a draft, unless the policy requires published versions;
//   - pinned by digest (Request.Digest), a draft, active or deprecated version runs (under
//     versions.requirePublished, active or deprecated only);
//   - pending, rejected and yanked versions never run: pending_approval for a pending one.
//
// A new version that asks for more than the version it would follow (the active one, else the
// newest whose permissions were accepted) is pending; see Widening and Transitions.

// versionListTTL is how long the runtime trusts what it read of a skill's versions: a version
// another replica publishes serves here within that.
const versionListTTL = time.Second

// maxLoadedVersions bounds the stored versions a runtime keeps unpacked and loaded at once.
const maxLoadedVersions = 64

// versions is a runtime's view of its version.Store.
type versions struct {
	store version.Store
	// cat, when the store is a version.Feed, holds every version in memory: lists read it,
	// and the store only when it has not been read yet.
	cat *versionCatalog
	// suffix is what a user's view files its skills' ids under in cat ("@<scope>"); "" for
	// the tenant's.
	suffix string
	mu     sync.Mutex
	lists  map[string]versionList // by skill id, read within versionListTTL (without cat)
	// writeErr is the last write's error, at writeFailed: see writable.
	writeErr    error
	writeFailed time.Time
	// loaded are the stored versions unpacked under dir and loaded, by digest, oldest first.
	loaded []*registry.Skill
	dir    string
}

type versionList struct {
	at   time.Time
	list []version.Version
}

// list returns skill's versions, newest first: from the catalog; without one (or before it has
// read the store once), from the store or from what was read within versionListTTL.
func (vs *versions) list(ctx context.Context, skill string) ([]version.Version, error) {
	if vs.cat != nil {
		if l, ok := vs.cat.get(skill + vs.suffix); ok {
			if vs.suffix == "" || len(l) == 0 {
				return l, nil
			}
			out := slices.Clone(l)
			for i := range out {
				out[i].Skill = skill
			}
			return out, nil
		}
	}
	vs.mu.Lock()
	l, ok := vs.lists[skill]
	vs.mu.Unlock()
	if ok && time.Since(l.at) < versionListTTL {
		return l.list, nil
	}
	list, err := vs.store.Versions(ctx, skill)
	if err != nil {
		return nil, unavailable(err)
	}
	vs.mu.Lock()
	if len(vs.lists) >= 4096 {
		clear(vs.lists) // bounded: a cache, not a copy of the store
	}
	vs.lists[skill] = versionList{at: time.Now(), list: list}
	vs.mu.Unlock()
	return list, nil
}

// forget drops what was read of skill's versions: the next list reads the store.
func (vs *versions) forget(skill string) {
	vs.mu.Lock()
	delete(vs.lists, skill)
	vs.mu.Unlock()
}

// unavailable marks a store's failure as version.ErrUnavailable: one that is not an answer
// about the versions themselves (not found, a conflict) is the store's, and passes.
func unavailable(err error) error {
	if err == nil || errors.Is(err, version.ErrNotFound) || errors.Is(err, version.ErrConflict) || errors.Is(err, version.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", version.ErrUnavailable, err)
}

// storeWriteTimeout bounds recording a version from a run's path; storeRetry is how long, after
// a failure, runs do not try again (each would wait on a store that is down).
const (
	storeWriteTimeout = 5 * time.Second
	storeRetry        = 5 * time.Second
)

// writable says why versions cannot be recorded now: the last try failed within storeRetry.
func (vs *versions) writable() error {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.writeErr != nil && time.Since(vs.writeFailed) < storeRetry {
		return vs.writeErr
	}
	return nil
}

// wrote notes how the last write to the store went.
func (vs *versions) wrote(err error) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.writeErr, vs.writeFailed = err, time.Now()
}

// changed says that v (as the store answered a write of it) changed here: the next list has
// it, and whatever else the write changed (the version a publish deprecated).
func (vs *versions) changed(ctx context.Context, v version.Version) {
	vs.forget(v.Skill)
	if vs.cat == nil {
		return
	}
	if err := vs.cat.refresh(ctx); err != nil {
		v.Skill += vs.suffix
		vs.cat.apply(v)
	}
}

// fresh reads the changes of the store now, for a reader that asked for the versions
// themselves (an API call, not a run); a store that cannot be read leaves the catalog as it is.
func (vs *versions) fresh(ctx context.Context, skill string) {
	vs.forget(skill)
	if vs.cat != nil {
		_ = vs.cat.refresh(ctx)
	}
}

// findVersion returns the version of list at digest.
func findVersion(list []version.Version, digest string) (version.Version, bool) {
	i := slices.IndexFunc(list, func(v version.Version) bool { return v.Digest == digest })
	if i < 0 {
		return version.Version{}, false
	}
	return list[i], true
}

// active returns the active version of list.
func active(list []version.Version) (version.Version, bool) {
	i := slices.IndexFunc(list, func(v version.Version) bool { return v.Status == version.Active })
	if i < 0 {
		return version.Version{}, false
	}
	return list[i], true
}

// baseline is the version a new one is compared with: the active one, else the newest that
// left the published line (deprecated or yanked), else none. Drafts are no baseline: a skill
// never published is still being written, and its author widening it from one draft to the next
// (the everyday loop of editing a folder and running it) needs no one's approval; what it may
// have is the policy's to cap, and requirePublished keeps drafts from running at all. Once a
// version was published, every later one is held to the last published grant, even after a
// yank, so a yank cannot open the gate.
func baseline(list []version.Version) (version.Version, bool) {
	if v, ok := active(list); ok {
		return v, true
	}
	for _, v := range list { // newest first
		switch v.Status {
		case version.Deprecated, version.Yanked:
			return v, true
		}
	}
	return version.Version{}, false
}

// recordVersion returns the stored version of s (loaded, checked and sound), recording it first
// when the store does not have it: pending when it asks for more than its baseline, or, written
// by an agent, for more than the agents' ceiling; a draft otherwise.
func (rt *Runtime) recordVersion(ctx context.Context, s *registry.Skill, prov version.Provenance) (version.Version, error) {
	vs := rt.versionsOf(s.ID())
	digest := s.Digest()
	list, err := vs.list(ctx, s.ID())
	if err != nil {
		return version.Version{}, err
	}
	if v, ok := findVersion(list, digest); ok {
		return v, nil
	}
	files, got, err := readTree(ctx, s.Dir())
	if err != nil {
		return version.Version{}, fmt.Errorf("record version of %q: %w", s.ID(), err)
	}
	if got != digest {
		return version.Version{}, fmt.Errorf("record version of %q: %s changed while it was read: try again", s.ID(), s.Dir())
	}
	if prov.Source == "" {
		prov.Source = "folder"
	}
	if s.AgentWritten() {
		prov.Source = "agent"
	}
	v := version.Version{Skill: s.ID(), Digest: digest, Version: s.Version(), Status: version.Draft, Source: prov.Source,
		CreatedBy: prov.By, CreatedAt: time.Now().UTC()}
	v.Grant = versionGrant(s)
	if s.AgentWritten() {
		// Recorded with what it would get once an admin approves it: the policy's own grant,
		// past the agents' ceiling. Until then it runs under the ceiling.
		full := rt.policy.Load()
		g := full.Grant(s.Manifest(), s.Dir())
		v.Grant = g
		for _, r := range registry.CompactStrings(s.Grant().Refused) {
			v.Diff = append(v.Diff, "beyond the agents' ceiling: "+r)
		}
	}
	if base, ok := baseline(list); ok {
		v.Diff = append(v.Diff, version.Widening(base.Grant, v.Grant)...)
	}
	if len(v.Diff) > 0 {
		v.Status = version.Pending
	}
	if err := vs.writable(); err != nil {
		return version.Version{}, fmt.Errorf("record version of %q: %w", s.ID(), err)
	}
	wctx, cancel := context.WithTimeout(ctx, storeWriteTimeout)
	stored, created, err := vs.store.AddVersion(wctx, v, files)
	cancel()
	err = unavailable(err)
	vs.wrote(err)
	if err != nil {
		return version.Version{}, fmt.Errorf("record version of %q: %w", s.ID(), err)
	}
	vs.changed(ctx, stored)
	if created {
		rt.logger.Info("skill version recorded", "skill", s.ID(), "digest", digest, "status", stored.Status, "source", stored.Source, "by", stored.CreatedBy)
	}
	return stored, nil
}

// pick returns the skill to run for a request of cur's id (cur is the current version, checked
// and sound), and pin, a digest or "" (see the rules above).
func (rt *Runtime) pick(ctx context.Context, cur *registry.Skill, pin string, who access.Principal) (*registry.Skill, *run.Error) {
	id := cur.ID()
	curV, recErr := rt.recordVersion(ctx, cur, version.Provenance{Source: "folder"})
	list, err := rt.versionsOf(id).list(ctx, id)
	if err != nil {
		return nil, storeDown(id, err)
	}
	requirePublished := rt.policy.Load().Versions.RequirePublished
	var v version.Version
	if pin != "" {
		d, derr := matchDigest(list, pin)
		if derr != nil && errors.Is(derr, version.ErrNotFound) {
			// A version recorded elsewhere (another replica) since the catalog last read the
			// store: read its changes now, once, rather than refuse it.
			vs := rt.versionsOf(id)
			vs.fresh(ctx, id)
			if l, err := vs.list(ctx, id); err == nil {
				list = l
				d, derr = matchDigest(list, pin)
			}
		}
		if derr != nil {
			if recErr != nil {
				return nil, storeDown(id, recErr)
			}
			return nil, run.Errorf(run.KindNotFound, id, derr, "skill %q: %v", id, derr)
		}
		v, _ = findVersion(list, d)
		switch v.Status {
		case version.Active, version.Deprecated:
		case version.Draft:
			if requirePublished {
				return nil, run.Errorf(run.KindNotFound, id, nil, "skill %q: version %s is a draft, and the policy runs only published versions (versions.requirePublished): a publisher publishes it", id, short(v.Digest))
			}
		default:
			return nil, versionRefusal(v)
		}
	} else if a, ok := active(list); ok {
		// What the folder holds now need not be recorded for the active version to serve: a
		// store that cannot take it costs the skill's runs nothing.
		if recErr != nil {
			rt.logger.Warn("skill version not recorded; the active version serves", "skill", id, "err", recErr)
		}
		v = a
	} else {
		switch {
		case recErr != nil:
			return nil, storeDown(id, recErr)
		case requirePublished && curV.Status == version.Pending:
			return nil, versionRefusal(curV)
		case requirePublished:
			return nil, run.Errorf(run.KindNotFound, id, nil, "skill %q has no published version, and the policy runs only published versions (versions.requirePublished): a publisher publishes one (skillbox publish %s %s)", id, id, short(curV.Digest))
		case curV.Status == version.Draft:
			v = curV
		case curV.Status == version.Deprecated:
			return nil, run.Errorf(run.KindNotFound, id, nil, "skill %q: its current version %s is deprecated and it has no active version: publish one, or pin a version by digest", id, short(curV.Digest))
		default:
			return nil, versionRefusal(curV)
		}
	}
	if v.Status == version.Draft && !draftRunsFor(v, who) {
		return nil, run.Errorf(run.KindNotFound, id, nil, "skill %q has no published version: its draft %s runs only for its author and the tenant's admins until a publisher publishes it (skillbox publish %s %s)",
			id, short(v.Digest), id, short(v.Digest))
	}
	if v.Digest == cur.Digest() && !(cur.AgentWritten() && len(v.Diff) > 0) {
		return cur, nil
	}
	// An older version, or an agent's version an admin approved (its directory's copy is held
	// to the agents' ceiling; the stored one runs with what the admin approved).
	s, err := rt.loadVersion(ctx, v)
	if err != nil {
		return nil, run.Errorf(run.KindInternal, id, err, "skill %q: version %s cannot be loaded: %v", id, short(v.Digest), err)
	}
	if rerr := runnable(ctx, s); rerr != nil {
		return nil, rerr
	}
	return s, nil
}

// draftRunsFor says whether draft v runs for who: a draft no publisher has published is its
// author's to test, and the admins'. A skill the operator placed in a skills directory (source
// folder) is the operator's, who holds every role: its draft runs for everyone, and the local
// loop (edit a folder, run it) is unchanged; so does every draft on a server without keys,
// where every caller is the operator.
func draftRunsFor(v version.Version, who access.Principal) bool {
	return v.Source == "folder" || who.SeesAll() || (v.CreatedBy != "" && who.Caller() == v.CreatedBy)
}

// storeDown is the error of a run whose version cannot be decided because the version store
// cannot be read or written: busy (try again), not the skill's fault nor the caller's.
func storeDown(id string, err error) *run.Error {
	// The store's own error stays in the log: it can name hosts and paths a client must not see.
	return run.Errorf(run.KindBusy, id, err, "skill %q: its versions cannot be read or recorded now (the version store is unreachable), and no version known here can serve it: try again later", id)
}

// versionRefusal is the error of a run of v, which never runs.
func versionRefusal(v version.Version) *run.Error {
	if v.Status == version.Pending {
		e := run.Errorf(run.KindPendingApproval, v.Skill, nil, "skill %q: version %s asks for more than the version before it, and waits for an admin's approval (skillbox approve %s %s):\n  - %s",
			v.Skill, short(v.Digest), v.Skill, short(v.Digest), strings.Join(v.Diff, "\n  - "))
		return e
	}
	return run.Errorf(run.KindNotFound, v.Skill, nil, "skill %q: version %s is %s and never runs", v.Skill, short(v.Digest), v.Status)
}

// short is a digest's first 12 hex digits, enough to name it among a skill's versions.
func short(digest string) string {
	h := strings.TrimPrefix(digest, bundle.DigestPrefix)
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// matchDigest returns the digest of list that d names: whole ("sha256:<hex>" or "<hex>") or a
// prefix of at least 8 hex digits that only one version has.
func matchDigest(list []version.Version, d string) (string, error) {
	h := strings.ToLower(strings.TrimPrefix(d, bundle.DigestPrefix))
	if len(h) < 8 || len(h) > 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%w: %q is not a version digest: give sha256:<64 hex digits>, or at least its first 8", version.ErrNotFound, d)
	}
	var found []string
	for _, v := range list {
		if strings.HasPrefix(strings.TrimPrefix(v.Digest, bundle.DigestPrefix), h) {
			found = append(found, v.Digest)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w %s", version.ErrNotFound, d)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: %s names %d versions: give more digits", version.ErrNotFound, d, len(found))
}

// loadVersion unpacks v's stored files (once per process, checking them against v's digest)
// and loads it as a skill under the current policy.
func (rt *Runtime) loadVersion(ctx context.Context, v version.Version) (*registry.Skill, error) {
	vs := rt.versionsOf(v.Skill)
	vs.mu.Lock()
	for _, s := range vs.loaded {
		if s.ID() == v.Skill && s.Digest() == v.Digest {
			vs.mu.Unlock()
			return s, nil
		}
	}
	vs.mu.Unlock()
	files, err := vs.store.VersionFiles(ctx, v.Skill, v.Digest)
	if err != nil {
		return nil, err
	}
	if vs.dir == "" {
		return nil, errors.New("no directory to unpack versions into")
	}
	sum := sha256.Sum256([]byte(v.Skill + "\x00" + v.Digest))
	dir := filepath.Join(vs.dir, hex.EncodeToString(sum[:8]), v.Skill)
	if _, err := os.Stat(dir); err != nil {
		staging, err := os.MkdirTemp(vs.dir, ".unpack-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(staging)
		if err := writeTree(staging, files); err != nil {
			return nil, err
		}
		if v.Source == "agent" && len(v.Diff) == 0 {
			// Still held to the agents' ceiling: nobody approved more.
			if err := writeAuthorship(staging, authorship{By: "agent", Created: v.CreatedAt}); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return nil, err
		}
		if err := os.Rename(staging, dir); err != nil && !errors.Is(err, os.ErrExist) {
			if _, serr := os.Stat(dir); serr != nil { // not another run unpacking the same
				return nil, err
			}
		}
	}
	s, ok := registry.Load(dir, rt.policy.Load(), rt.checks)
	if !ok {
		return nil, fmt.Errorf("the stored files are not a skill package")
	}
	if got := s.Digest(); got != "" && got != v.Digest {
		return nil, fmt.Errorf("the stored files have digest %s, not the version's: the store was changed outside skillbox", got)
	}
	if _, err := s.Check(ctx); err != nil {
		return nil, err
	}
	if got := s.Digest(); got != v.Digest {
		return nil, fmt.Errorf("the stored files have digest %s, not the version's: the store was changed outside skillbox", got)
	}
	vs.mu.Lock()
	vs.loaded = append(vs.loaded, s)
	if len(vs.loaded) > maxLoadedVersions {
		vs.loaded = vs.loaded[1:] // its files stay until Close: a run may still read them
	}
	vs.mu.Unlock()
	return s, nil
}

// writeTree writes files (slash paths to contents) under dir, through an os.Root.
func writeTree(dir string, files map[string][]byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for name, data := range files {
		if !bundle.CleanPath(name) {
			return fmt.Errorf("%q is not a clean relative path", name)
		}
		if d := path.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := root.WriteFile(name, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// readTree reads the files of the skill at dir that its digest covers, and the digest.
func readTree(ctx context.Context, dir string) (map[string][]byte, string, error) {
	t, err := (*registry.Digester)(nil).Walk(dir, false)
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	files := make(map[string][]byte, len(t.Files))
	for _, f := range t.Files {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		data, err := bundle.ReadRootFile(root, f.Rel, f.Size)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", f.Rel, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.Sum {
			return nil, "", fmt.Errorf("%s changed while it was read", f.Rel)
		}
		files[f.Rel] = data
	}
	return files, t.Digest, nil
}

// pickVersion is pick for a runtime with a version.Store; without one, s runs, and a pin must
// name it.
func (rt *Runtime) pickVersion(ctx context.Context, s *registry.Skill, pin string, who access.Principal) (*registry.Skill, *run.Error) {
	if rt.versions != nil {
		return rt.pick(ctx, s, pin, who)
	}
	if pin != "" {
		if _, err := matchDigest([]version.Version{{Digest: s.Digest()}}, pin); err != nil {
			return nil, run.Errorf(run.KindNotFound, s.ID(), version.ErrNoStore, "skill %q is at version %s, not %s: this runtime keeps no other versions", s.ID(), short(s.Digest()), pin)
		}
	}
	return s, nil
}
