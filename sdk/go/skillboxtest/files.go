package skillboxtest

import (
	"strings"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

// Access is what a mount allows.
type Access int

// The accesses a manifest's permissions.files can grant.
const (
	ReadOnly Access = iota
	ReadWrite
)

type mount struct {
	path     string
	writable bool
}

// Mount grants the virtual directory path (such as /workspace/notes) with access. It
// starts empty; add files with File. /skill, the skill's own directory, is always
// mounted read-only.
func Mount(path string, access Access) Option {
	return func(h *Host) {
		path = strings.TrimSuffix(path, "/")
		for i := range h.mounts {
			if h.mounts[i].path == path {
				h.mounts[i].writable = access == ReadWrite
				return
			}
		}
		h.mounts = append(h.mounts, mount{path: path, writable: access == ReadWrite})
	}
}

// File puts a file with contents data at the virtual path, which must lie under a Mount
// (or /skill). The skill may read it, and replace it if its mount is writable.
func File(path, data string) Option {
	return func(h *Host) {
		h.files[path] = []byte(data)
		h.fileCheck = append(h.fileCheck, path)
	}
}

// resolve finds the mount of the virtual path p, refusing it as the host does: malformed
// paths are INVALID and a path outside every mount is DENIED. The caller holds h.mu, or
// owns h (New).
func (h *Host) resolve(p string) (*mount, string, *refusal) {
	if len(p) == 0 || len(p) > maxPathBytes {
		return nil, "", refuse(skill.Invalid, "path must be 1 to %d bytes", maxPathBytes)
	}
	if strings.ContainsAny(p, "\x00\\") {
		return nil, "", refuse(skill.Invalid, "path %q contains a NUL byte or a backslash", p)
	}
	if !strings.HasPrefix(p, "/") {
		return nil, "", refuse(skill.Invalid, "path %q must be absolute, such as /workspace/file.txt", p)
	}
	segs := strings.Split(p[1:], "/")
	for _, seg := range segs {
		if seg == ".." || seg == "." || seg == "" {
			return nil, "", refuse(skill.Invalid, "path %q must be clean: no '..', '.' or empty segments", p)
		}
	}
	if len(segs) > maxPathDepth {
		return nil, "", refuse(skill.Invalid, "path %q is deeper than %d segments", p, maxPathDepth)
	}
	var best *mount
	for i := range h.mounts {
		m := &h.mounts[i]
		if (p == m.path || strings.HasPrefix(p, m.path+"/")) && (best == nil || len(m.path) > len(best.path)) {
			best = m
		}
	}
	if best == nil {
		return nil, "", refuse(skill.Denied, "path %q is outside the granted mounts%s", p, h.mountList())
	}
	if p == best.path {
		return nil, "", refuse(skill.Invalid, "path %q is a mount's directory, not a file", p)
	}
	return best, strings.TrimPrefix(p, best.path+"/"), nil
}

func (h *Host) mountList() string {
	names := make([]string, len(h.mounts))
	for i, m := range h.mounts {
		names[i] = m.path
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// isDir reports whether some file lies below p, which makes p a directory.
func (h *Host) isDir(p string) bool {
	for f := range h.files {
		if strings.HasPrefix(f, p+"/") {
			return true
		}
	}
	return false
}

// readFile answers skillbox_read_file.
func (h *Host) readFile(p string) ([]byte, *refusal) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, _, bad := h.resolve(p); bad != nil {
		if bad.status == skill.Denied {
			h.deny("file " + p + ": outside the granted mounts")
		}
		return nil, bad
	}
	data, ok := h.files[p]
	switch {
	case !ok && h.isDir(p):
		return nil, refuse(skill.Invalid, "%s: not a regular file", p)
	case !ok:
		return nil, refuse(skill.NotFound, "%s: no such file", p)
	case int64(len(data)) > h.limits.MaxFileBytes:
		return nil, refuse(skill.Limit, "%s: %d bytes is more than maxFileBytes (%d)", p, len(data), h.limits.MaxFileBytes)
	}
	return append([]byte(nil), data...), nil
}

// writeFile answers skillbox_write_file: within a writable mount and the run's quotas,
// creating parent directories as needed.
func (h *Host) writeFile(p string, data []byte) *refusal {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, _, bad := h.resolve(p)
	if bad != nil {
		if bad.status == skill.Denied {
			h.deny("file " + p + ": outside the granted mounts")
		}
		return bad
	}
	if !m.writable {
		h.deny("write " + p + ": mount " + m.path + " is read-only")
		return refuse(skill.Denied, "%s: mount %s is read-only", p, m.path)
	}
	if h.writes >= maxWrites {
		return refuse(skill.Limit, "%s: a run may write at most %d files", p, maxWrites)
	}
	if h.written+int64(len(data)) > h.limits.MaxWriteBytes {
		return refuse(skill.Limit, "%s: %d more bytes would pass maxWriteBytes (%d)", p, len(data), h.limits.MaxWriteBytes)
	}
	if h.isDir(p) {
		return refuse(skill.Failed, "%s: is a directory", p)
	}
	for dir := p[:strings.LastIndexByte(p, '/')]; len(dir) > len(m.path); dir = dir[:strings.LastIndexByte(dir, '/')] {
		if _, isFile := h.files[dir]; isFile {
			return refuse(skill.Failed, "%s: not a directory", p)
		}
	}
	h.written += int64(len(data))
	h.writes++
	h.files[p] = append([]byte(nil), data...)
	return nil
}
