package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/version"
)

// usersDir is the directory, in a Runtime's first skills directory, that holds its users' own
// skills, one directory each. Hidden, so a scan of the skills directory never lists them.
const usersDir = ".users"

// privateSkillLabel is the skill label of the runs of users' own skills in the tenant's
// counters (Stats, metrics): the tenant's metrics count them without naming them.
const privateSkillLabel = "(user)"

// maxUsers bounds the users' views one Runtime keeps: each holds a registry of the user's own
// skills over the tenant's.
const maxUsers = 1024

// User returns the view of one user of rt's tenant, made at the first call and kept until rt
// closes (or it is closed): a *Runtime that serves rt's skills and the user's own (visibility
// user), which only it sees. It is a view of rt, not a second Runtime (see newUserView): its
// policy, engine, quota, recorder, version store, history of recent runs, counters and background
// check are rt's, so a tenant is bounded and accounted once, whichever of its users runs. Its
// installs and removals go where the skill is: a skill of the user's own in the user's
// directory, any other through rt (see Install). A user's skill with the id of one of rt's
// shadows it for that user alone.
//
// The user's skills live in <first skills directory>/.users/<scope>/ (see UserScope); their
// versions are filed under "<id>@<scope>". A Runtime that is itself a user's has no users.
func (rt *Runtime) User(ctx context.Context, user string) (*Runtime, error) {
	switch {
	case rt.parent != nil:
		return nil, fmt.Errorf("runtime: the runtime of user %q has no users of its own", rt.user)
	case user == "":
		return nil, errors.New("runtime: a user needs a name")
	case len(rt.cfg.SkillDirs) == 0:
		return nil, fmt.Errorf("user %q: %w: a user's skills live in the first skills directory", user, ErrNoSkillDir)
	}
	// A user's registry is the user's own skills over rt's: rt has one before any user scans.
	// (Scanning takes rt's reloadMu, and a scan of rt takes its users' after it: never the other
	// way round.)
	rt.registry()
	rt.usersMu.Lock()
	defer rt.usersMu.Unlock()
	if u := rt.users[user]; u != nil {
		return u, nil
	}
	rt.closeMu.RLock()
	closed := rt.closed
	rt.closeMu.RUnlock()
	if closed {
		return nil, run.ErrClosed
	}
	if len(rt.users) >= maxUsers {
		return nil, fmt.Errorf("runtime: %d users' runtimes already: at most %d", len(rt.users), maxUsers)
	}
	u := rt.newUserView(user)
	if rt.users == nil {
		rt.users = map[string]*Runtime{}
	}
	rt.users[user] = u
	return u, nil
}

// newUserView is the Runtime of user over rt: a view, not a second Runtime. It has its own
// registry (the user's directory over rt's: see overlay), its own runs in flight (so closing it
// refuses and waits for its runs alone) and, with a version store, the user's scoped versions.
// Everything else is rt's: the policy (passed on at every scan of rt), the engine and admission,
// the quota, recent runs, counters and kept artifacts (one tenant is bounded and accounted once,
// whichever of its users runs), the module digests and the index that keeps them, and the
// background check, which checks the users' own skills after rt's.
func (rt *Runtime) newUserView(user string) *Runtime {
	scope := access.UserScope(user)
	dir := filepath.Join(rt.cfg.SkillDirs[0], usersDir, scope)
	cfg := rt.cfg
	cfg.SkillDirs = append([]string{dir}, rt.cfg.SkillDirs...)
	cfg.Policy, cfg.PolicyFile = nil, ""
	cfg.Quota, cfg.OnReload = Quota{}, nil
	u := &Runtime{cfg: cfg, logger: rt.logger.With("user", user), parent: rt, user: user, userDir: dir,
		shared: rt.shared, engine: rt.engine, interps: rt.interps, bytecode: rt.bytecode, admission: rt.admission,
		cacheDir: rt.cacheDir, privateCache: rt.privateCache, tracer: rt.tracer,
		quota: rt.quota, history: rt.history, counters: rt.counters, kept: rt.kept, background: rt.background,
		runs: map[*run.Result]context.CancelFunc{}}
	u.checks = &registry.Checks{Digests: rt.checks.Digests, Bundles: rt.checks.Bundles, OnCheck: u.onCheck}
	u.policy.Store(rt.policy.Load())
	u.closing, u.startClose = context.WithCancel(context.Background())
	u.indexOnce.Do(func() {})  // rt's index holds the digests the view shares
	u.owner = rt.engine.Join() // every module is live for u until its first scan retains its own
	if rt.versions != nil {
		// The user's versions, filed apart in the tenant's store, unpacked beside the tenant's.
		u.versions = &versions{store: scopedVersions{inner: rt.cfg.Versions, user: user, suffix: "@" + scope},
			cat: rt.versions.cat, suffix: "@" + scope, lists: map[string]versionList{}, dir: rt.versions.dir}
	}
	return u
}

// ViewFor is the Runtime that serves who's calls: the view of who's user (who.Caller()) when
// that user has skills of their own, else rt itself. A face asks it for every request, and never
// decides itself whose skills a caller sees. A principal of another named tenant is refused
// (access.ErrForbidden); one without a tenant is the default tenant's, whatever rt's name.
func (rt *Runtime) ViewFor(ctx context.Context, who access.Principal) (*Runtime, error) {
	switch {
	case rt.parent != nil:
		return nil, fmt.Errorf("runtime: ViewFor on user %q's view: ask the tenant's Runtime", rt.user)
	case who.Tenant != "" && who.Tenant != rt.cfg.Tenant:
		return nil, fmt.Errorf("%w: a principal of tenant %q has no view of tenant %q", access.ErrForbidden, who.Tenant, rt.cfg.Tenant)
	}
	user := who.Caller()
	if user == "" || !rt.HasUserSkills(user) {
		return rt, nil
	}
	return rt.User(ctx, user)
}

// HasUserSkills reports whether user has a directory of skills of their own in rt (even an
// empty one): a face that makes users' Runtimes only for those who have skills asks it first.
func (rt *Runtime) HasUserSkills(user string) bool {
	if rt.parent != nil || user == "" || len(rt.cfg.SkillDirs) == 0 {
		return false
	}
	rt.usersMu.Lock()
	_, made := rt.users[user]
	rt.usersMu.Unlock()
	return made || isDirPath(filepath.Join(rt.cfg.SkillDirs[0], usersDir, access.UserScope(user)))
}

// UserName is the user whose Runtime rt is (see User), "" for a tenant's.
func (rt *Runtime) UserName() string { return rt.user }

// VisibilityOf says who sees skill s in rt: VisibilityUser for a skill of rt's user's own.
func (rt *Runtime) VisibilityOf(s *Skill) access.Visibility {
	if rt.private(s.in()) {
		return access.VisibilityUser
	}
	return access.VisibilityOrg
}

// private reports whether s is one of the user's own skills (in rt's user directory).
func (rt *Runtime) private(s *registry.Skill) bool {
	return rt.userDir != "" && s != nil && strings.HasPrefix(s.Dir(), rt.userDir+string(filepath.Separator))
}

// visibleTo is who alone may see a run of s: its user for a skill of a user's own, "" (the
// tenant) otherwise.
func (rt *Runtime) visibleTo(s *registry.Skill) string {
	if rt.private(s) {
		return rt.user
	}
	return ""
}

// VisibleTo is who alone may see a run of skill id in rt now (see Record.VisibleTo): its user
// for a skill of rt's user's own, "" (the tenant) for any other, or none.
func (rt *Runtime) VisibleTo(id string) string {
	s, _ := rt.lookup(id)
	return rt.visibleTo(s)
}

// versionsOf is the versions of skill id in rt: a user's Runtime files its user's own skills
// apart (scopedVersions) and the tenant's with the tenant's Runtime, whose lists they share.
func (rt *Runtime) versionsOf(id string) *versions {
	if rt.parent == nil || rt.versions == nil {
		return rt.versions
	}
	if s, ok := rt.lookup(id); ok && !rt.private(s) {
		return rt.parent.versions
	}
	return rt.versions
}

// route says which Runtime installs or removes skill id: rt, or, for a user's Runtime, the
// tenant's when the skill is the tenant's. want is the visibility asked for: "" is where the
// skill is, and the tenant's for a new one.
func (rt *Runtime) route(id string, want access.Visibility) (*Runtime, error) {
	switch want {
	case "", access.VisibilityOrg, access.VisibilityUser:
	default:
		return nil, &access.VisibilityError{Skill: id, Msg: fmt.Sprintf("visibility %q: use %q or %q", want, access.VisibilityOrg, access.VisibilityUser)}
	}
	if rt.parent == nil {
		if want == access.VisibilityUser {
			return nil, &access.VisibilityError{Skill: id, Msg: "visibility user needs a user: an API key that names one (or Runtime.User)"}
		}
		return rt, nil
	}
	cur, ok := rt.lookup(id)
	mine := ok && rt.private(cur)
	switch {
	case mine && want == access.VisibilityOrg:
		return nil, &access.VisibilityError{Skill: id, Msg: "you have a skill of your own with this id (visibility user): remove it first, or give the tenant's skill another id"}
	case mine:
		return rt, nil
	case ok && want == access.VisibilityUser:
		return nil, &access.VisibilityError{Skill: id, Msg: "the tenant has a skill with this id (visibility org): give yours another id"}
	case want == access.VisibilityUser:
		return rt, nil
	}
	return rt.parent, nil
}

// closeUsers closes every user's Runtime of rt.
func (rt *Runtime) closeUsers(ctx context.Context) error {
	rt.usersMu.Lock()
	users := slices.Collect(maps.Values(rt.users))
	rt.users = nil
	rt.usersMu.Unlock()
	var errs []error
	for _, u := range users {
		errs = append(errs, u.Close(ctx))
	}
	return errors.Join(errs...)
}

// scopedVersions files a user's own skills' versions in the tenant's version store under
// "<id>@<scope>" (see version.ValidSkill), naming the user, and gives them back under their ids.
type scopedVersions struct {
	inner  version.Store
	user   string
	suffix string
}

func (v scopedVersions) key(skill string) string { return skill + v.suffix }

func (v scopedVersions) out(x version.Version) version.Version {
	x.Skill = strings.TrimSuffix(x.Skill, v.suffix)
	return x
}

func (v scopedVersions) AddVersion(ctx context.Context, x version.Version, files map[string][]byte) (version.Version, bool, error) {
	x.Skill, x.User = v.key(x.Skill), v.user
	got, created, err := v.inner.AddVersion(ctx, x, files)
	return v.out(got), created, err
}

func (v scopedVersions) Version(ctx context.Context, skill, digest string) (version.Version, error) {
	got, err := v.inner.Version(ctx, v.key(skill), digest)
	return v.out(got), err
}

func (v scopedVersions) Versions(ctx context.Context, skill string) ([]version.Version, error) {
	list, err := v.inner.Versions(ctx, v.key(skill))
	for i := range list {
		list[i] = v.out(list[i])
	}
	return list, err
}

func (v scopedVersions) VersionFiles(ctx context.Context, skill, digest string) (map[string][]byte, error) {
	return v.inner.VersionFiles(ctx, v.key(skill), digest)
}

func (v scopedVersions) SetVersionStatus(ctx context.Context, skill, digest string, t version.Transition, by, note string, at time.Time) (version.Version, error) {
	got, err := v.inner.SetVersionStatus(ctx, v.key(skill), digest, t, by, note, at)
	return v.out(got), err
}

// FindVersions finds what q selects among the tenant's versions and the user's own: never
// another user's.
func (v scopedVersions) FindVersions(ctx context.Context, q version.Query) ([]version.Version, error) {
	q.Viewer = v.user
	list, err := v.inner.FindVersions(ctx, q)
	for i := range list {
		list[i] = v.out(list[i])
	}
	return list, err
}

// isDirPath reports whether p is a directory.
func isDirPath(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
