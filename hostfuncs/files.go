package hostfuncs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// Bounds on writes that bytes do not measure: each write may create directories, and an empty
// file costs no quota, so depth and count are capped instead.
const (
	maxPathDepth = 32
	maxWrites    = 256
)

// resolve maps a guest's virtual path to a mount and a path relative to the mount's directory.
// It refuses rather than repairs: a path with "..", ".", an empty segment, a NUL byte or a
// backslash is INVALID, so what the guest names is exactly what is opened.
func (c *Call) resolve(ctx context.Context, p string) (*Mount, string, *Refusal) {
	if len(p) == 0 || len(p) > MaxPathBytes {
		return nil, "", refuse(StatusInvalid, "path must be 1 to %d bytes", MaxPathBytes)
	}
	if strings.ContainsAny(p, "\x00\\") {
		return nil, "", refuse(StatusInvalid, "path %q contains a NUL byte or a backslash", escapeControl(p))
	}
	if !strings.HasPrefix(p, "/") {
		return nil, "", refuse(StatusInvalid, "path %q must be absolute, such as /workspace/file.txt", p)
	}
	segs := strings.Split(p[1:], "/")
	for _, seg := range segs {
		if seg == ".." || seg == "." || seg == "" {
			return nil, "", refuse(StatusInvalid, "path %q must be clean: no '..', '.' or empty segments", p)
		}
	}
	if len(segs) > maxPathDepth {
		return nil, "", refuse(StatusInvalid, "path %q is deeper than %d segments", p, maxPathDepth)
	}
	best := longestMount(c.Grant.Mounts, p)
	if best == nil {
		best = c.mountAllowed(ctx, p)
	}
	if best == nil {
		c.deny("file " + escapeControl(p) + ": outside the granted mounts")
		return nil, "", refuse(StatusDenied, "path %q is outside the granted mounts%s", p, c.mountList())
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p, best.Path), "/")
	if rel == "" {
		return nil, "", refuse(StatusInvalid, "path %q is a mount's directory, not a file", p)
	}
	return best, rel, nil
}

func (c *Call) mountList() string {
	if len(c.Grant.Mounts) == 0 {
		return " (this run has no file access)"
	}
	names := make([]string, len(c.Grant.Mounts))
	for i, m := range c.Grant.Mounts {
		names[i] = m.Path
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// fileError maps an os error to a refusal. os.Root reports a symlink or ".." that leads out of the
// mount as an error of its own; that is a refusal, not a failure.
func (c *Call) fileError(op, p string, err error) *Refusal {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return refuse(StatusNotFound, "%s: no such file", p)
	case errors.Is(err, fs.ErrPermission):
		c.deny(op + " " + escapeControl(p) + ": permission denied")
		return refuse(StatusDenied, "%s: permission denied", p)
	case strings.Contains(err.Error(), "escapes from parent"):
		c.deny(op + " " + escapeControl(p) + ": leads outside its mount")
		return refuse(StatusDenied, "%s: leads outside its mount (a symlink?)", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// Do not leak host paths to the guest: name the virtual path and the bare reason.
		return refuse(StatusFailed, "%s: %v", p, pe.Err)
	}
	return refuse(StatusFailed, "%s: failed", p)
}

// ReadFile returns the contents of the file at the virtual path vp, which must be under a
// granted mount (or /skill), within the run's maxFileBytes.
func (c *Call) ReadFile(ctx context.Context, vp string) ([]byte, error) {
	m, rel, bad := c.resolve(ctx, vp)
	if bad != nil {
		return nil, bad
	}
	root, err := os.OpenRoot(m.Dir)
	if err != nil {
		return nil, c.fileError("read", vp, err)
	}
	defer root.Close()
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, past the run's
	// deadline. Anything but a regular file is refused below, after the open.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, c.fileError("read", vp, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, c.fileError("read", vp, err)
	}
	if !st.Mode().IsRegular() {
		return nil, refuse(StatusInvalid, "%s: not a regular file", vp)
	}
	max := c.Grant.Limits.MaxFileBytes
	if st.Size() > max {
		return nil, refuse(StatusLimit, "%s: %d bytes is more than maxFileBytes (%d)", vp, st.Size(), max)
	}
	// The file may grow between Stat and Read: read at most max+1 to notice.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, c.fileError("read", vp, err)
	}
	if int64(len(data)) > max {
		return nil, refuse(StatusLimit, "%s: more than maxFileBytes (%d)", vp, max)
	}
	c.update(func(u *tally) { u.FilesRead = appendOnce(u.FilesRead, vp) })
	return data, nil
}

// WriteFile replaces the file at the virtual path vp with data, atomically, under a writable
// mount and within the run's write quota.
func (c *Call) WriteFile(ctx context.Context, vp string, data []byte) error {
	m, rel, bad := c.resolve(ctx, vp)
	if bad != nil {
		return bad
	}
	if !m.Writable {
		c.deny("write " + escapeControl(vp) + ": mount " + m.Path + " is read-only")
		return refuse(StatusDenied, "%s: mount %s is read-only", vp, m.Path)
	}
	// Reserve the quota before writing, so concurrent or failed writes cannot overshoot it. The
	// number of writes is capped too: empty files and the directories they create cost no bytes.
	// A mount with bounds of its own is held to them instead of maxWriteBytes.
	var over, tooMany bool
	var bounded *Refusal
	var undo func()
	c.mu.Lock()
	switch u := &c.usage; {
	case u.writes >= maxWrites:
		tooMany = true
	case m.Bounds != nil:
		if undo, bounded = c.reserveBounded(m, rel, vp, int64(len(data))); bounded == nil {
			u.BytesWritten += int64(len(data))
			u.boundedBytes += int64(len(data))
			u.writes++
		}
	case u.BytesWritten-u.boundedBytes+int64(len(data)) > c.Grant.Limits.MaxWriteBytes:
		over = true
	default:
		u.BytesWritten += int64(len(data))
		u.writes++
	}
	c.mu.Unlock()
	if tooMany {
		return refuse(StatusLimit, "%s: a run may write at most %d files", vp, maxWrites)
	}
	if bounded != nil {
		return bounded
	}
	if over {
		return refuse(StatusLimit, "%s: %d more bytes would pass maxWriteBytes (%d)", vp, len(data), c.Grant.Limits.MaxWriteBytes)
	}
	written := false
	defer func() {
		if !written { // a failed write gives its reservation back
			c.mu.Lock()
			c.usage.BytesWritten -= int64(len(data))
			c.usage.writes--
			if undo != nil {
				c.usage.boundedBytes -= int64(len(data))
				undo()
			}
			c.mu.Unlock()
		}
	}()
	if err := os.MkdirAll(m.Dir, 0o750); err != nil {
		return c.fileError("write", vp, err)
	}
	root, err := os.OpenRoot(m.Dir)
	if err != nil {
		return c.fileError("write", vp, err)
	}
	defer root.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o750); err != nil {
			return c.fileError("write", vp, err)
		}
	}
	// A symlink in place of the file must stay inside the mount, as it must for reads: root.Stat
	// follows it and refuses one that leads out. (The rename then replaces the link itself.)
	if fi, err := root.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if _, err := root.Stat(rel); err != nil {
			return c.fileError("write", vp, err)
		}
	}
	// Write aside and rename, so a reader never sees half a file and a failed write loses nothing.
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := rel + ".skillbox-" + hex.EncodeToString(suffix[:])
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return c.fileError("write", vp, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, rel)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return c.fileError("write", vp, werr)
	}
	written = true
	c.update(func(u *tally) { u.FilesWritten = appendOnce(u.FilesWritten, vp) })
	return nil
}

// reserveBounded reserves a write of n bytes to rel under m, a mount with bounds of its own:
// its file count, the file's size and the mount's total, as they will be once the write lands
// (a rewrite replaces the file's size). undo gives the reservation back. c.mu is held.
func (c *Call) reserveBounded(m *Mount, rel, vp string, n int64) (undo func(), r *Refusal) {
	b := m.Bounds
	if n > b.MaxFileBytes {
		return nil, refuse(StatusLimit, "%s: %d bytes is more than the %s mount's maxFileBytes (%d)", vp, n, m.Path, b.MaxFileBytes)
	}
	if c.bounded == nil {
		c.bounded = map[string]map[string]int64{}
	}
	sizes := c.bounded[m.Path]
	if sizes == nil {
		sizes = map[string]int64{}
		c.bounded[m.Path] = sizes
	}
	prev, existed := sizes[rel]
	if !existed && int64(len(sizes)) >= b.MaxFiles {
		return nil, refuse(StatusLimit, "%s: the %s mount holds at most %d files (maxFiles)", vp, m.Path, b.MaxFiles)
	}
	var total int64
	for _, sz := range sizes {
		total += sz
	}
	if total-prev+n > b.MaxTotalBytes {
		return nil, refuse(StatusLimit, "%s: %d more bytes would pass the %s mount's maxTotalBytes (%d; %d held)", vp, n, m.Path, b.MaxTotalBytes, total)
	}
	sizes[rel] = n
	return func() {
		if existed {
			sizes[rel] = prev
		} else {
			delete(sizes, rel)
		}
	}, nil
}
