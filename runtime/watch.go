package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Watch reloads the registry whenever a file under the skill directories changes, polling every
// interval (at least 200ms; 0 means 2s), until ctx ends. Polling needs no OS-specific watcher and
// sees changes on network filesystems too; a skill dir is small, so a poll is cheap.
func (rt *Runtime) Watch(ctx context.Context, interval time.Duration) {
	if interval == 0 {
		interval = 2 * time.Second
	}
	interval = max(interval, 200*time.Millisecond)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Compared with the files as of the last scan (New, Reload, Install, Remove), so a change
		// made before Watch started is seen too.
		if fp := rt.fingerprint(); fp != *rt.scanned.Load() {
			rt.logger.Info("skill files changed; reloading")
			if err := rt.Reload(ctx); err != nil && ctx.Err() == nil {
				rt.logger.Warn("reload after a change failed", "err", err)
			}
		}
	}
}

// fingerprint hashes the names, sizes and modification times of the files two levels deep in
// the skill directories (a package's own files and its resources' first level), skipping the
// hidden staging directories Install uses.
func (rt *Runtime) fingerprint() [32]byte {
	h := sha256.New()
	var buf [16]byte
	for _, root := range rt.cfg.SkillDirs {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if strings.HasPrefix(d.Name(), ".") && p != root {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() && strings.Count(rel, string(os.PathSeparator)) >= 2 {
				return filepath.SkipDir
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			h.Write([]byte(p))
			binary.LittleEndian.PutUint64(buf[:8], uint64(info.Size()))
			binary.LittleEndian.PutUint64(buf[8:], uint64(info.ModTime().UnixNano()))
			h.Write(buf[:])
			return nil
		})
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
