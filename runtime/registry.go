package runtime

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// registry is one immutable scan of the skill directories.
type registry struct {
	byID  map[string]*Skill
	order []*Skill // by id
}

// scan loads every skill package directly under each of dirs. The first directory wins an id
// clash (with a warning); a missing directory yields nothing; a broken package is kept with its
// error. Subdirectories that are neither manifests nor SKILL.md packages are skipped silently.
//
// It reads manifests and SKILL.md frontmatter only. A skill whose files all have the identity
// they had when c last hashed them (in this process, or another through the index) gets that
// check's verdict, at the cost of a stat per file; the others stay unchecked, for their first run
// or the background check.
func scan(dirs []string, p *Policy, c *checks, logger *slog.Logger) *registry {
	var candidates []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				logger.Warn("cannot read skills directory", "dir", dir, "err", err)
			}
			continue
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || !isDir(dir, e) {
				continue
			}
			candidates = append(candidates, filepath.Join(dir, e.Name()))
		}
	}
	loaded := loadAll(candidates, p, c)
	r := &registry{byID: map[string]*Skill{}}
	for _, s := range loaded {
		if s == nil {
			continue
		}
		if prev, clash := r.byID[s.id]; clash {
			logger.Warn("skill id defined twice; the first wins", "skill", s.id, "kept", prev.dir, "ignored", s.dir)
			continue
		}
		if s.Status() == StatusError {
			logger.Warn("skill is broken", "skill", s.id, "err", s.Err())
		}
		r.byID[s.id] = s
		r.order = append(r.order, s)
	}
	sort.Slice(r.order, func(i, j int) bool { return r.order[i].id < r.order[j].id })
	kept := map[string]bool{}
	for _, s := range r.order {
		kept[s.dir] = true
	}
	c.digester().retain(kept)
	return r
}

// loadAll loads (and adopts what is known of) the skill packages in dirs, on as many goroutines
// as there are CPUs: a load is mostly waiting for the filesystem. The result is in dirs' order,
// nil where a directory is not a skill package.
func loadAll(dirs []string, p *Policy, c *checks) []*Skill {
	out := make([]*Skill, len(dirs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), len(dirs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(dirs) {
					return
				}
				if s, ok := loadSkill(dirs[i], p, c); ok {
					s.adopt()
					out[i] = s
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// isDir follows a symlinked skill directory: operators link skills in from elsewhere.
func isDir(parent string, e fs.DirEntry) bool {
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
func (r *registry) hashes() (out map[string]bool, unchecked bool) {
	out = map[string]bool{}
	for _, s := range r.order {
		switch v := s.state(); {
		case v.hash != "":
			out[v.hash] = true
		case v == unverified && s.kind == Executable:
			unchecked = true
		}
	}
	return out, unchecked
}
