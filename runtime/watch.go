package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// Watch reloads the registry whenever a file under the skill directories changes, until ctx
// ends. It asks the operating system to report changes (inotify, kqueue, ...: see fsnotify),
// watching each skill directory, each skill's own directory and the directories one level down
// in it (resources/) — what a run or a listing can notice — and reloads once changes have been
// quiet for a moment (watchQuiet), so that a build writing many files makes one reload.
//
// Where notifications are unavailable — the watcher cannot be made, a skill directory does not
// exist yet, or there would be more than maxWatches directories to watch, past which the OS's
// limit (inotify's max_user_watches) is near — it polls every interval instead (at least 200ms;
// 0 means 2s), comparing the names, sizes and modification times of the same files; polling
// also sees changes on network filesystems, which notifications may miss. It logs which it does.
//
// Either way it reloads once when it starts, so a change made between the last scan and the
// watch is not missed.
func (rt *Runtime) Watch(ctx context.Context, interval time.Duration) {
	if interval == 0 {
		interval = 2 * time.Second
	}
	interval = max(interval, 200*time.Millisecond)
	w, n, err := rt.notifier()
	if err != nil {
		rt.watchMode.Store(watchPolling)
		rt.logger.Info("watching the skill directories by polling", "interval", interval, "why", err.Error())
		rt.poll(ctx, interval)
		return
	}
	defer w.Close()
	rt.watchMode.Store(watchNotifying)
	rt.logger.Info("watching the skill directories with filesystem notifications", "watches", n)
	rt.reloadAfterChange(ctx)
	rt.notified(ctx, w)
}

// Watch modes, for the log and for tests.
const (
	watchNone int32 = iota
	watchNotifying
	watchPolling
)

// maxWatches bounds the directories Watch asks the OS to watch: inotify's limit is per user
// (max_user_watches, 8192 on older kernels), shared with every other program, and a watch holds
// about 1 KiB of kernel memory. Past it, polling is the better neighbour.
const maxWatches = 65536

// watchQuiet is how long changes must pause before a reload; watchMaxDelay bounds the wait under
// changes that never pause.
const (
	watchQuiet    = 200 * time.Millisecond
	watchMaxDelay = 2 * time.Second
)

// notifier makes a watcher over the skill directories and returns it with the number of
// directories it watches.
func (rt *Runtime) notifier() (*fsnotify.Watcher, int, error) {
	limit := maxWatches
	if rt.watchLimit > 0 {
		limit = rt.watchLimit
	}
	var dirs []string
	for _, root := range rt.cfg.SkillDirs {
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			return nil, 0, fmt.Errorf("skills directory %s cannot be watched until it exists", root)
		}
		dirs = append(dirs, root)
		dirs = append(dirs, watchable(root, 2)...)
		if len(dirs) > limit {
			return nil, 0, fmt.Errorf("more than %d directories to watch", limit)
		}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, 0, fmt.Errorf("no filesystem notifications: %w", err)
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.Close()
			return nil, 0, fmt.Errorf("cannot watch %s: %w", d, err)
		}
	}
	return w, len(dirs), nil
}

// watchable lists the directories under dir, depth levels down, that Watch watches: not hidden
// (Install's staging directories, .git), followed through symlinks as a scan does.
func watchable(dir string, depth int) []string {
	if depth == 0 {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !registry.IsDir(dir, e) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		out = append(out, p)
		out = append(out, watchable(p, depth-1)...)
	}
	return out
}

// notified reloads after each burst of relevant events until ctx ends.
func (rt *Runtime) notified(ctx context.Context, w *fsnotify.Watcher) {
	var quiet, deadline *time.Timer
	var quietC, deadlineC <-chan time.Time
	stopTimers := func() {
		for _, t := range []*time.Timer{quiet, deadline} {
			if t != nil {
				t.Stop()
			}
		}
		quietC, deadlineC = nil, nil
	}
	defer stopTimers()
	changed := func() {
		if quiet == nil {
			quiet, deadline = time.NewTimer(watchQuiet), time.NewTimer(watchMaxDelay)
		} else {
			quiet.Reset(watchQuiet)
			if deadlineC == nil {
				deadline.Reset(watchMaxDelay)
			}
		}
		quietC, deadlineC = quiet.C, deadline.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if rt.relevant(w, ev) {
				changed()
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			// An overflow lost events: reload to be sure of what is there.
			rt.logger.Warn("filesystem notifications failed; reloading", "err", err)
			changed()
		case <-quietC:
			stopTimers()
			rt.reloadAfterChange(ctx)
		case <-deadlineC:
			stopTimers()
			rt.reloadAfterChange(ctx)
		}
	}
}

// relevant reports whether ev may change what a scan finds, and watches a directory it creates
// where a skill or its resources may appear.
func (rt *Runtime) relevant(w *fsnotify.Watcher, ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod || strings.HasPrefix(filepath.Base(ev.Name), ".") {
		return false // a scan reads no mode; hidden files are no part of a skill (editors' swap files too)
	}
	if ev.Has(fsnotify.Create) {
		if depth := rt.depth(ev.Name); depth > 0 && depth <= 2 {
			if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
				for _, d := range append([]string{ev.Name}, watchable(ev.Name, 2-depth)...) {
					if err := w.Add(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
						rt.logger.Warn("cannot watch a new directory; its changes are seen at the next reload", "dir", d, "err", err)
					}
				}
			}
		}
	}
	return true
}

// depth is how many levels below its skill directory path is (1: a skill), or 0 when it is under
// none.
func (rt *Runtime) depth(path string) int {
	for _, root := range rt.cfg.SkillDirs {
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		return strings.Count(rel, string(os.PathSeparator)) + 1
	}
	return 0
}

// reloadAfterChange reloads the skills, logging a failure.
func (rt *Runtime) reloadAfterChange(ctx context.Context) {
	rt.logger.Info("skill files changed; reloading")
	if err := rt.Reload(ctx); err != nil && ctx.Err() == nil {
		rt.logger.Warn("reload after a change failed", "err", err)
	}
}

// poll reloads whenever the fingerprint of the skill files differs from the one of the last scan,
// every interval, until ctx ends.
func (rt *Runtime) poll(ctx context.Context, interval time.Duration) {
	// While anyone polls, every scan takes the fingerprint (a stat of every file) to compare with.
	rt.polling.Add(1)
	defer rt.polling.Add(-1)
	rt.reloadAfterChange(ctx)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if fp := rt.fingerprint(); rt.scanned.Load() == nil || fp != *rt.scanned.Load() {
			rt.reloadAfterChange(ctx)
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
