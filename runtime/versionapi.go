package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/version"
)

// Versions returns skill id's versions, newest first, its current version recorded first when
// the store does not have it yet. A skill that is gone from the skill directories still has its
// versions; an id with none is ErrNotFound (a *NotFoundError).
func (rt *Runtime) Versions(ctx context.Context, id string) ([]version.Version, error) {
	if rt.versions == nil {
		return nil, version.ErrNoStore
	}
	if s, ok := rt.lookup(id); ok {
		if v, err := s.Check(ctx); err == nil && v.Status == catalog.StatusActive {
			if _, err := rt.recordVersion(ctx, s, version.Provenance{Source: "folder"}); err != nil {
				return nil, err
			}
		}
	}
	_, list, err := rt.versionList(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, rt.missing(id)
	}
	return list, nil
}

// maxEvents bounds the events VersionHistory reads of one version.
const maxEvents = version.MaxQuery

// VersionHistory is Versions with each version's audit trail (version.Version.Events): who
// recorded it and moved it, when, and what they said. A store that is not a version.Feed keeps
// no trail: the versions come without one.
func (rt *Runtime) VersionHistory(ctx context.Context, id string) ([]version.Version, error) {
	list, err := rt.Versions(ctx, id)
	if err != nil {
		return nil, err
	}
	root := rt
	if rt.parent != nil {
		root = rt.parent
	}
	feed, ok := root.cfg.Versions.(version.Feed)
	if !ok {
		return list, nil
	}
	vs, _, err := rt.versionList(ctx, id)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(list)
	for i, v := range out {
		evs, err := feed.Events(ctx, id+vs.suffix, v.Digest, maxEvents)
		if err != nil {
			return nil, unavailable(err)
		}
		for j := range evs {
			evs[j].Skill = id
		}
		out[i].Events = evs
	}
	return out, nil
}

// readTrails sets each version of list (as the store's FindVersions named them: a user's own
// skill's as "<id>@<scope>") to its audit trail, its events naming the skill as the version does.
// A store that is not a version.Feed keeps no trail: list stays as it is.
func (rt *Runtime) readTrails(ctx context.Context, list []version.Version) error {
	feed, ok := rt.cfg.Versions.(version.Feed)
	if !ok {
		return nil
	}
	for i, v := range list {
		evs, err := feed.Events(ctx, v.Skill, v.Digest, maxEvents)
		if err != nil {
			return unavailable(err)
		}
		id, _, _ := strings.Cut(v.Skill, "@")
		for j := range evs {
			evs[j].Skill = id
		}
		list[i].Events = evs
	}
	return nil
}

// versionList reads skill id's versions afresh, and says whose they are: in a user's Runtime,
// the user's own skill's, or the tenant's. An id in no directory any more is the user's when
// the user has versions of it, else the tenant's.
func (rt *Runtime) versionList(ctx context.Context, id string) (*versions, []version.Version, error) {
	vs := rt.versionsOf(id)
	vs.fresh(ctx, id)
	list, err := vs.list(ctx, id)
	if err != nil || len(list) > 0 || rt.parent == nil || vs != rt.versions {
		return vs, list, err
	}
	if _, ok := rt.lookup(id); ok {
		return vs, list, nil
	}
	vs = rt.parent.versions
	vs.fresh(ctx, id)
	list, err = vs.list(ctx, id)
	return vs, list, err
}

// SkillVersion returns skill id's version that digest names (whole, or at least 8 hex digits).
func (rt *Runtime) SkillVersion(ctx context.Context, id, digest string) (version.Version, error) {
	list, err := rt.Versions(ctx, id)
	if err != nil {
		return version.Version{}, err
	}
	d, err := matchDigest(list, digest)
	if err != nil {
		return version.Version{}, fmt.Errorf("skill %q: %w", id, err)
	}
	v, _ := findVersion(list, d)
	return v, nil
}

// ChangeVersion applies action ("approve", "reject", "publish", "deprecate", "yank": see
// Transitions) to skill id's version digest, for who, and returns the version as it now is. note
// is kept with it (a rejection's reason), and who's caller as the one who changed it.
//
// # Errors
//
// version.ErrNoStore; version.ErrNotFound; a *access.RoleError (access.ErrForbidden) when who's
// role is short of the action's, or an agent (who.Agent) asks to approve or reject;
// version.ErrConflict when the version's status is not one the action starts from (the message
// says which it is).
func (rt *Runtime) ChangeVersion(ctx context.Context, who access.Principal, id, digest, action, note string) (version.Version, error) {
	if rt.versions == nil {
		return version.Version{}, version.ErrNoStore
	}
	t, ok := version.Transitions[action]
	if !ok {
		return version.Version{}, fmt.Errorf("unknown action %q: use approve, reject, publish, deprecate or yank", action)
	}
	if !who.Allows(t.Role) {
		return version.Version{}, &access.RoleError{Action: action, Need: t.Role, Actor: who.Actor()}
	}
	if len(note) > 4096 {
		return version.Version{}, fmt.Errorf("the note is %d bytes: at most 4096", len(note))
	}
	v, err := rt.SkillVersion(ctx, id, digest)
	if err != nil {
		return version.Version{}, err
	}
	if !t.Allows(v.Status) {
		return v, fmt.Errorf("%s skill %q version %s: %w: it is %s, and %s starts from %v", action, id, short(v.Digest), version.ErrConflict, v.Status, action, t.From)
	}
	vs, _, err := rt.versionList(ctx, id)
	if err != nil {
		return version.Version{}, err
	}
	nv, err := vs.store.SetVersionStatus(ctx, id, v.Digest, t, who.Caller(), note, time.Now().UTC())
	err = unavailable(err)
	if err != nil {
		vs.fresh(ctx, id)
		return nv, fmt.Errorf("%s skill %q version %s: %w", action, id, short(v.Digest), err)
	}
	vs.changed(ctx, nv)
	rt.logger.Info("skill version "+action, "skill", id, "digest", v.Digest, "from", v.Status, "to", nv.Status, "by", who.Caller())
	return nv, nil
}

// FindVersions is the review queue and its like: the versions in q.Status of every skill of rt's
// tenant, the tenant's and its users' own, newest first, at most q.Limit (1 to version.MaxQuery; 0
// is version.DefaultQuery), and whether there are more, as who may see them: a user the tenant's
// and their own, a tenant's admin every user's too, each naming its Version.User, the user to act
// as to change it (the runtime sets q.Viewer from who; what a face put there is ignored). A
// user's Runtime lists the same queue as its tenant's.
func (rt *Runtime) FindVersions(ctx context.Context, who access.Principal, q version.Query) ([]version.Version, bool, error) {
	q.Viewer = who.Viewer()
	root := rt
	if rt.parent != nil {
		root = rt.parent
	}
	switch {
	case root.versions == nil:
		return nil, false, version.ErrNoStore
	case !q.Status.Valid():
		return nil, false, fmt.Errorf("%w: status %q: use one of %v", version.ErrBadQuery, q.Status, version.Statuses)
	case q.Limit < 0 || q.Limit > version.MaxQuery:
		return nil, false, fmt.Errorf("%w: limit %d: ask for 1 to %d versions", version.ErrBadQuery, q.Limit, version.MaxQuery)
	case q.Limit == 0:
		q.Limit = version.DefaultQuery
	}
	want := q.Limit
	q.Limit++
	list, err := root.versions.store.FindVersions(ctx, q)
	if err != nil {
		return nil, false, unavailable(err)
	}
	more := len(list) > want
	if more {
		list = list[:want]
	}
	if q.Events {
		if err := root.readTrails(ctx, list); err != nil {
			return nil, false, err
		}
	}
	for i := range list {
		if list[i].User != "" { // filed as <id>@<scope>: the user's view names it by its id
			list[i].Skill, _, _ = strings.Cut(list[i].Skill, "@")
		}
	}
	return list, more, nil
}

// Serving says which version of skill id a run by who would serve now, by the rules a run
// follows, without running it: what skillbox show reports, so that show and run agree. It
// records the directory's current version first, as a run does. Without a version store, it
// is the directory's version (no status). The error is the run's refusal (a *run.Error).
func (rt *Runtime) Serving(ctx context.Context, who access.Principal, id string) (version.Version, error) {
	s, rerr := rt.resolve(ctx, id, false)
	if rerr != nil {
		return version.Version{}, rerr
	}
	if rt.versions == nil {
		return version.Version{Skill: id, Digest: s.Digest(), Version: s.Version()}, nil
	}
	picked, rerr := rt.pick(ctx, s, "", who)
	if rerr != nil {
		return version.Version{}, rerr
	}
	list, err := rt.versionsOf(id).list(ctx, id)
	if err != nil {
		return version.Version{}, err
	}
	v, _ := findVersion(list, picked.Digest())
	return v, nil
}
