package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// openIndex returns the index file of this runtime's skill directories ("" when there is no
// cache directory to keep it in). It is read at the first scan (loadIndex): a process that
// only runs one skill does not read it.
func (rt *Runtime) openIndex() string {
	if rt.cacheDir == "" || len(rt.cfg.SkillDirs) == 0 {
		return ""
	}
	dir := filepath.Join(rt.cacheDir, "index")
	if err := engine.EnsurePrivateDir(dir); err != nil {
		rt.logger.Warn("skill index off", "err", err)
		return ""
	}
	h := sha256.New()
	for _, d := range rt.cfg.SkillDirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		fmt.Fprintf(h, "%s\x00", d)
	}
	return filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:24]+".idx")
}

// loadIndex reads the index, and the journal beside it, into the digester.
func (rt *Runtime) loadIndex() {
	if rt.index == "" {
		return
	}
	if err := rt.checks.Digests.Load(rt.index); err != nil && !errors.Is(err, fs.ErrNotExist) {
		rt.logger.Warn("skill index ignored; it will be rewritten", "path", rt.index, "err", err)
	}
	rt.checks.Digests.LoadJournal(rt.index + registry.JournalSuffix)
}

// saveIndex writes what the digester learned since the index was read or last written: the whole
// index when it was read (a scan happened), else an entry in its journal, so that a process that
// knows a few skills does not replace what another learned of all of them.
func (rt *Runtime) saveIndex() {
	if rt.index == "" {
		return
	}
	loaded := rt.reg.Load() != nil // a scan read the index first (see rescan)
	if err := rt.checks.Digests.Save(rt.index, loaded); err != nil {
		rt.logger.Warn("cannot write the skill index", "path", rt.index, "err", err)
	}
}
