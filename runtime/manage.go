package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/version"
)

// Errors of skill management, matchable with errors.Is.
var (
	// ErrExists is returned by Install of an id that is already installed, without Replace.
	ErrExists = errors.New("skill already exists")
	// ErrNoSkillDir is returned when the runtime has no skill directory to write to.
	ErrNoSkillDir = errors.New("no skill directory to install into")
)

// InstallOptions says how Install treats an existing skill.
type InstallOptions struct {
	// Replace allows replacing an installed skill of the same id (an update); without it an
	// existing id is ErrExists (a create).
	Replace bool
	// MustExist makes Install fail with ErrNotFound when no skill of that id is installed.
	MustExist bool
	// Face and Who say who installs: Who needs the author role (access.NeedInstall), and its
	// caller is named in the skill's record and its version's. When an agent installs for Who
	// (Who.Agent: the toolset's create_skill and update_skill), the skill is installed as
	// written by an agent: only when the policy enables it, never over a skill an agent did not
	// write, and only when it asks for nothing beyond the policy's AgentSkills ceiling (see
	// authored.go; with a version.Store, such a skill is installed pending instead).
	Face run.Face
	Who  access.Principal
	// Visibility is who is to see a new skill: VisibilityUser installs it as the user's own,
	// in a user's Runtime (see Runtime.User) only; "" or VisibilityOrg, the tenant's. An
	// existing skill is replaced where it is, and a visibility that is not its own is an
	// error (ErrVisibility).
	Visibility access.Visibility
}

// Install writes the skill package files (relative slash paths -> contents) as skill id into the
// first skill directory, atomically: the package is written aside, loaded and compiled there, and
// only a valid package replaces anything. A failed Install changes nothing on disk or in the
// registry. Runs in flight finish on the version they started with.
//
// Allowed paths: skill.json or skill.yaml, the code (execute.wasm, or execute.py, .js or .ts and
// the sibling modules it imports), SKILL.md, and files under resources/, lib/ and scripts/.
//
// # Errors
//
// A *SkillError (errors.Is ErrInvalidSkill) for an invalid package, with every problem;
// ErrExists; ErrNotFound (MustExist); ErrNoSkillDir; a *VisibilityError (ErrVisibility) for a
// clash of visibility; for a bundle (a package with .bundle/manifest.json), *bundle.Error
// values (errors.Is bundle.ErrInvalid) when its files or signatures do not match it, and
// bundle.ErrUntrusted when the policy's bundles.requireSigned refuses it, or refuses a package
// that is not a signed bundle; a *access.RoleError (access.ErrForbidden) when opts.Who lacks the
// author role.
func (rt *Runtime) Install(ctx context.Context, id string, files map[string][]byte, opts InstallOptions) (*Skill, error) {
	if err := opts.Who.Require(access.NeedInstall, "installing", id); err != nil {
		return nil, err
	}
	if len(rt.cfg.SkillDirs) == 0 {
		return nil, ErrNoSkillDir
	}
	if !spec.ValidID(id) {
		return nil, &spec.SkillError{ID: id, Problems: []*spec.ManifestError{{Path: id, Msg: fmt.Sprintf("%q is not a valid skill id", id),
			Hint: "use lower-case letters, digits and '-', starting with a letter or digit, at most 63"}}}
	}
	if to, err := rt.route(id, opts.Visibility); err != nil {
		return nil, err
	} else if to != rt { // a user's Runtime installing the tenant's skill
		opts.Visibility = ""
		return to.Install(ctx, id, files, opts)
	}
	// A bundle is checked (contents, signatures, the policy's trust) and its own entries dropped;
	// under bundles.requireSigned anything else is refused here.
	bp := rt.policy.Load().Bundles
	files, bun, err := bundle.CheckInstall(id, files, bp.TrustedKeys, bp.RequireSigned)
	if err != nil {
		return nil, err
	}
	if se := checkPackageFiles(id, files); se != nil {
		// Report the manifest's problems too, so one upload shows everything to fix.
		for _, name := range spec.ManifestFiles() {
			if data, ok := files[name]; ok {
				var me *spec.SkillError
				if _, err := spec.ParseManifest(name, data); errors.As(err, &me) {
					se.Problems = append(se.Problems, me.Problems...)
				}
				break
			}
		}
		return nil, se
	}
	rt.reloadMu.Lock()
	defer rt.reloadMu.Unlock()

	root := rt.cfg.SkillDirs[0]
	final := filepath.Join(root, id)
	_, statErr := os.Stat(final)
	exists := statErr == nil
	if cur, ok := rt.registryLocked().ByID[id]; ok && filepath.Dir(cur.Dir()) != filepath.Clean(root) {
		exists = true // installed in another directory, which would shadow or be shadowed
	}
	switch {
	case exists && !opts.Replace:
		return nil, fmt.Errorf("install %q: %w", id, ErrExists)
	case !exists && opts.MustExist:
		return nil, rt.missing(id)
	}
	if opts.Who.Agent {
		if !rt.policy.Load().AgentSkills.Enabled {
			return nil, fmt.Errorf("install %q: %w: the operator enables them in the policy (agentSkills: {enabled: true})", id, ErrAuthoringOff)
		}
		if cur, ok := rt.registryLocked().ByID[id]; exists && (!ok || !cur.AgentWritten()) {
			return nil, fmt.Errorf("install %q: %w: an agent may replace only the skills agents wrote", id, ErrNotAgentSkill)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(root, "."+id+".staging-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging) // a no-op once renamed into place
	for name, data := range files {
		p := filepath.Join(staging, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
	}
	// Load and compile the package where it is, under its real id: CheckSkill reads the
	// directory name as the id, so check a same-named directory inside the staging area.
	check := filepath.Join(staging, id)
	if err := os.Mkdir(check, 0o755); err != nil {
		return nil, err
	}
	for name := range files {
		top := strings.SplitN(name, "/", 2)[0]
		if _, err := os.Stat(filepath.Join(check, top)); err == nil {
			continue
		}
		if err := os.Rename(filepath.Join(staging, top), filepath.Join(check, top)); err != nil {
			return nil, err
		}
	}
	if opts.Who.Agent {
		if err := writeAuthorship(check, authorship{By: "agent", Caller: opts.Who.Caller(), Face: opts.Face, Created: time.Now().UTC()}); err != nil {
			return nil, err
		}
	}
	s, ok, admitErr := rt.checkSkill(ctx, check)
	if admitErr != nil {
		// No room to compile it now: a busy refusal, not a problem of the package.
		return nil, admissionError(s, admitErr)
	}
	if !ok {
		return nil, &spec.SkillError{ID: id, Problems: []*spec.ManifestError{{Path: id, Msg: "not a skill package", Hint: "include skill.json and execute.wasm, or SKILL.md"}}}
	}
	if s.Status() != catalog.StatusActive {
		return nil, packageRelative(s.Err(), check, id)
	}
	if opts.Who.Agent && rt.versions == nil {
		// With versions, it is recorded pending instead, for an admin to approve or reject.
		if err := ceilingError(id, s.Grant(), s.ProgramGrant()); err != nil {
			return nil, err
		}
	}
	if rt.versions != nil {
		// Recorded before it replaces anything: an install the store cannot record changes
		// nothing. A version that asks for more than the one before it is recorded pending and
		// installed, and does not run until an admin approves it (see pick).
		prov := version.Provenance{Source: "upload", By: opts.Who.Caller()}
		if bun != nil {
			prov.Source = "bundle"
		}
		if _, err := rt.recordVersion(ctx, s, prov); err != nil {
			return nil, err
		}
	}
	if err := swapIn(check, final, staging); err != nil {
		return nil, err
	}
	r := rt.rescan()
	rt.logger.Info("skill installed", "skill", id, "replaced", exists)
	rt.announce(ctx, id, s.Digest())
	// Checked already, in staging: checking it where it now is hashes its files again but finds
	// its module's check by its hash, and returns it checked, as it was accepted.
	installed := r.ByID[id]
	if installed != nil {
		_, _ = installed.Check(ctx)
	}
	return view(installed), nil
}

// Remove deletes skill id from the first skill directory and the registry, for who, who needs
// the admin role (access.NeedRemove). Runs in flight finish.
//
// An agent acting for who (who.Agent: the toolset's delete_skill) deletes only a skill an agent
// wrote, only when the policy enables agents' skills, and needs the role that wrote it
// (access.NeedInstall), not the admin's.
//
// # Errors
//
// A *access.RoleError (access.ErrForbidden) when who lacks the role; for an agent,
// ErrAuthoringOff when the policy does not enable agents' skills and ErrNotAgentSkill for a
// skill an agent did not write; ErrNotFound (kind not_found) for an id with no skill.
func (rt *Runtime) Remove(ctx context.Context, who access.Principal, id string) error {
	if who.Agent {
		return rt.removeByAgent(ctx, who, id)
	}
	if err := who.Require(access.NeedRemove, "removing", id); err != nil {
		return err
	}
	return rt.remove(ctx, id)
}

// remove deletes skill id, whoever may (see Remove).
func (rt *Runtime) remove(ctx context.Context, id string) error {
	if len(rt.cfg.SkillDirs) == 0 {
		return ErrNoSkillDir
	}
	if !spec.ValidID(id) {
		return run.Errorf(run.KindNotFound, id, nil, "no skill with this id")
	}
	if to, _ := rt.route(id, ""); to != rt { // a user's Runtime removing the tenant's skill
		return to.remove(ctx, id)
	}
	rt.reloadMu.Lock()
	defer rt.reloadMu.Unlock()
	if _, err := os.Stat(filepath.Join(rt.cfg.SkillDirs[0], id)); err != nil {
		return run.Errorf(run.KindNotFound, id, nil, "no skill with this id in the first (writable) skills directory")
	}
	trash, err := discard(rt.cfg.SkillDirs[0], id)
	if err != nil {
		return err
	}
	rt.rescan()
	rt.logger.Info("skill removed", "skill", id)
	rt.announce(ctx, id, "")
	return os.RemoveAll(trash)
}

// swapIn puts the package dir in place of final (both on one filesystem): the old one is moved
// into aside, then dir in. Each rename is atomic; between the two, the id is briefly absent on
// disk, never half-written. A failed swap puts the old one back.
func swapIn(dir, final, aside string) error {
	var old string
	if _, err := os.Stat(final); err == nil {
		old = filepath.Join(aside, ".old")
		if err := os.Rename(final, old); err != nil {
			return err
		}
	}
	if err := os.Rename(dir, final); err != nil {
		if old != "" {
			_ = os.Rename(old, final) // put the old version back
		}
		return err
	}
	return nil
}

// discard moves root/id out of the way (atomically: the id is gone at once) into a trash
// directory it returns, for the caller to delete at leisure.
func discard(root, id string) (string, error) {
	trash, err := os.MkdirTemp(root, "."+id+".removed-")
	if err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(root, id), filepath.Join(trash, id)); err != nil {
		os.RemoveAll(trash)
		return "", err
	}
	return trash, nil
}

// packageRelative rewrites the problems of a package checked in dir to name files as the
// uploader did ("skill.json"), not by where the server staged them.
func packageRelative(err error, dir, id string) error {
	var se *spec.SkillError
	if !errors.As(err, &se) {
		return err
	}
	out := registry.RelativeProblems(se, dir, id)
	for _, p := range out.Problems {
		p.Path = strings.TrimPrefix(strings.TrimPrefix(p.Path, id), "/")
		if p.Path == "" {
			p.Path = id
		}
	}
	return out
}

// checkPackageFiles refuses paths a package may not contain, every problem at once. Its bounds
// are the [bundle.Reader]'s defaults, for callers that build the map themselves.
func checkPackageFiles(id string, files map[string][]byte) *spec.SkillError {
	se := &spec.SkillError{ID: id}
	l := bundle.Limits{}.WithDefaults()
	var total int64
	if len(files) > l.MaxFiles {
		se.Problems = append(se.Problems, &spec.ManifestError{Path: id, Msg: fmt.Sprintf("%d files; a package has at most %d", len(files), l.MaxFiles)})
	}
	manifests := 0
	for name, data := range files {
		total += int64(len(data))
		clean := path.Clean(name)
		switch {
		case name == "" || clean != name || strings.HasPrefix(name, "/") || strings.HasPrefix(name, "../") || name == ".." ||
			strings.ContainsAny(name, "\\\x00"):
			se.Problems = append(se.Problems, &spec.ManifestError{Path: name, Msg: "not a clean relative path"})
			continue
		case spec.IsManifestFile(name):
			manifests++
		case spec.IsCodeFile(name) || strings.EqualFold(name, "SKILL.md"):
		case bundle.PackageDir(name) != "" || registry.IsScriptSource(name):
			if strings.HasPrefix(name, ".") || strings.Contains(name, "/.") {
				se.Problems = append(se.Problems, &spec.ManifestError{Path: name, Msg: "hidden files are not allowed"})
			}
		default:
			se.Problems = append(se.Problems, &spec.ManifestError{Path: name, Msg: "not allowed in a package",
				Hint: "a package holds skill.json (or skill.yaml), its code (execute.wasm, or execute.py, .js or .ts and their sibling modules), SKILL.md, and files under resources/, lib/ and scripts/"})
		}
	}
	if manifests > 1 {
		se.Problems = append(se.Problems, &spec.ManifestError{Path: id, Msg: "more than one manifest", Hint: "keep one of skill.json, skill.yaml"})
	}
	if total > l.MaxBytes {
		se.Problems = append(se.Problems, &spec.ManifestError{Path: id, Msg: fmt.Sprintf("%d bytes; a package has at most %d", total, l.MaxBytes)})
	}
	if len(se.Problems) > 0 {
		return se
	}
	return nil
}
