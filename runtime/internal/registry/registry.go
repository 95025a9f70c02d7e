package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// registry is one immutable scan of the skill directories.
type Set struct {
	ByID  map[string]*Skill
	Order []*Skill // by id
}

// scan loads every skill package directly under each of dirs. The first directory wins an id
// clash (with a warning); within one directory, a directory named by an id wins it over one whose
// id was derived from its name (see resolveIDs); a missing directory yields nothing; a broken
// package is kept with its error. Subdirectories that are neither manifests nor SKILL.md packages
// are skipped silently.
//
// It reads manifests and SKILL.md frontmatter only. A skill whose files all have the identity
// they had when c last hashed them (in this process, or another through the index) gets that
// check's verdict, at the cost of a stat per file; the others stay unchecked, for their first run
// or the background check.
func Scan(dirs []string, p *policy.Policy, c *Checks, logger *slog.Logger) *Set {
	var candidates []string
	var groups []int // where each directory's candidates start
	for _, dir := range dirs {
		groups = append(groups, len(candidates))
		subs, err := PackageCandidates(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				logger.Warn("cannot read skills directory", "dir", dir, "err", err)
			}
			continue
		}
		candidates = append(candidates, subs...)
	}
	loaded := loadAll(candidates, p, c)
	for i, start := range groups {
		end := len(loaded)
		if i+1 < len(groups) {
			end = groups[i+1]
		}
		ResolveIDs(loaded[start:end], logger)
	}
	adoptAll(loaded)
	r := &Set{ByID: map[string]*Skill{}}
	for _, s := range loaded {
		if s == nil {
			continue
		}
		if prev, clash := r.ByID[s.id]; clash {
			logger.Warn("skill id defined twice; the first wins", "skill", s.id, "kept", prev.dir, "ignored", s.dir)
			continue
		}
		if s.Status() == catalog.StatusError {
			logger.Warn("skill is broken", "skill", s.id, "err", s.Err())
		}
		r.ByID[s.id] = s
		r.Order = append(r.Order, s)
	}
	sort.Slice(r.Order, func(i, j int) bool { return r.Order[i].id < r.Order[j].id })
	kept := map[string]bool{}
	for _, s := range r.Order {
		kept[s.dir] = true
	}
	c.digester().Retain(kept)
	return r
}

// packageCandidates returns the directories in dir that may be skill packages, sorted by name:
// its subdirectories (symlinks to directories included), hidden ones left out.
func PackageCandidates(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !IsDir(dir, e) {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out, nil
}

// resolveIDs settles the ids of the skills of one skills directory (in order of their
// directories' names, nil where a directory is not a package) when an id was derived from a
// directory's name (see Skill.ID) and another skill has it too: a directory named by the id
// keeps it, else the first by name does. No skill is dropped silently: each other one stays
// listed under its directory's name, broken, with a problem that names the skill that has the
// id, and the clash is logged. It runs before anyone else sees the skills, and before adopt.
func ResolveIDs(skills []*Skill, logger *slog.Logger) {
	owner := map[string]*Skill{}
	for _, s := range skills {
		if s != nil && !s.derived() {
			owner[s.id] = s // directory names are unique within a directory
		}
	}
	for _, s := range skills {
		if s == nil || !s.derived() {
			continue
		}
		w, taken := owner[s.id]
		if !taken {
			owner[s.id] = s
			continue
		}
		id, base := s.id, filepath.Base(s.dir)
		s.id = base
		if s.problems != nil {
			s.problems.ID = base
		}
		s.fail(&spec.ManifestError{Path: s.dir, Msg: fmt.Sprintf("the id %q made of the directory's name %q is already the id of the skill in %q", id, base, filepath.Base(w.dir)),
			Hint: "rename one of the directories, so that each skill has its own id"})
		if logger != nil {
			logger.Warn("two skill directories make the same id; one is kept, the other listed as broken", "skill", id, "kept", w.dir, "broken", s.dir)
		}
	}
}

// loadAll loads the skill packages in dirs, on as many goroutines as there are CPUs: a load is
// mostly waiting for the filesystem. The result is in dirs' order, nil where a directory is not
// a skill package.
func loadAll(dirs []string, p *policy.Policy, c *Checks) []*Skill {
	out := make([]*Skill, len(dirs))
	parallel(len(dirs), func(i int) {
		if s, ok := Load(dirs[i], p, c); ok {
			out[i] = s
		}
	})
	return out
}

// adoptAll gives each skill the verdict its remembered checks prove current (Skill.adopt), in
// parallel like loadAll.
func adoptAll(skills []*Skill) {
	parallel(len(skills), func(i int) {
		if skills[i] != nil {
			skills[i].Adopt()
		}
	})
}

// parallel calls f(i) for each i below n, on as many goroutines as there are CPUs.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// isDir follows a symlinked skill directory: operators link skills in from elsewhere.
func IsDir(parent string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink != 0 {
		st, err := os.Stat(filepath.Join(parent, e.Name()))
		return err == nil && st.IsDir()
	}
	return false
}

// hashes are the module hashes of r's checked skills; unchecked reports whether r has skills
// whose hash is not known yet.
func (r *Set) Hashes() (out map[string]bool, unchecked bool) {
	out = map[string]bool{}
	for _, s := range r.Order {
		switch v := s.State(); {
		case v.Hash != "":
			out[v.Hash] = true
		case v == Unverified && s.kind == spec.Executable:
			unchecked = true
		}
	}
	return out, unchecked
}

// overlay is own over base: every skill of own, and each of base whose id own has not. A user's
// registry is the user's own skills over the tenant's registry: the tenant's skills are the
// tenant's Skills, scanned and checked once however many users see them, and a user's skill with
// the id of one of the tenant's shadows it for that user alone.
func Overlay(own, base *Set) *Set {
	if base == nil {
		return own
	}
	r := &Set{ByID: make(map[string]*Skill, len(own.ByID)+len(base.ByID)), Order: make([]*Skill, 0, len(own.Order)+len(base.Order))}
	i, j := 0, 0
	for i < len(own.Order) || j < len(base.Order) {
		switch {
		case j == len(base.Order) || (i < len(own.Order) && own.Order[i].id <= base.Order[j].id):
			s := own.Order[i]
			if i++; j < len(base.Order) && base.Order[j].id == s.id {
				j++ // shadowed
			}
			r.ByID[s.id] = s
			r.Order = append(r.Order, s)
		default:
			s := base.Order[j]
			j++
			r.ByID[s.id] = s
			r.Order = append(r.Order, s)
		}
	}
	return r
}
