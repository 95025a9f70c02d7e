package runtime

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// registry is one immutable scan of the skill directories.
type registry struct {
	byID  map[string]*Skill
	order []*Skill // by id
}

// scan loads every skill package directly under each of dirs. The first directory wins an id
// clash (with a warning); a missing directory yields nothing; a broken package is kept with its
// error. Subdirectories that are neither manifests nor SKILL.md packages are skipped silently.
func scan(dirs []string, p *Policy, d *digester, logger *slog.Logger) *registry {
	r := &registry{byID: map[string]*Skill{}}
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
			s, ok := loadSkill(filepath.Join(dir, e.Name()), p, d)
			if !ok {
				continue
			}
			if prev, clash := r.byID[s.id]; clash {
				logger.Warn("skill id defined twice; the first wins", "skill", s.id, "kept", prev.dir, "ignored", s.dir)
				continue
			}
			if s.status == StatusError {
				logger.Warn("skill is broken", "skill", s.id, "err", s.err)
			}
			r.byID[s.id] = s
			r.order = append(r.order, s)
		}
	}
	sort.Slice(r.order, func(i, j int) bool { return r.order[i].id < r.order[j].id })
	d.prune()
	return r
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

func (r *registry) hashes() map[string]bool {
	out := map[string]bool{}
	for _, s := range r.order {
		if s.hash != "" {
			out[s.hash] = true
		}
	}
	return out
}
