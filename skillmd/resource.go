package skillmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"
)

// DefaultResourceLimit is the size cap of [ReadResource] when it is given none: a resource goes
// into a model's context, where a megabyte is already a great deal.
const DefaultResourceLimit = 1 << 20

// maxRelPath bounds a resource path, as the guest ABI bounds file paths.
const maxRelPath = 4096

// ReadResource reads the file at rel, a slash-separated path relative to skillDir
// ("reference/api.md"), of at most max bytes (max <= 0 means [DefaultResourceLimit]).
//
// The path comes from a model, so it is checked before anything is opened, and opened through an
// [os.Root] at skillDir, which refuses any way out of the directory, symlinks included. Symlinks
// that stay inside are followed. The package's own files (SKILL.md, skill.json) can be read too,
// though [ListResources] does not offer them.
//
// # Errors
//
// A [*ResourceError] matching:
//   - [ErrInvalid]: an empty, absolute or over-long path, a ".." segment, a NUL byte, a
//     backslash, invalid UTF-8; or a directory rather than a file;
//   - [ErrDenied]: a hidden segment (".git/config", ".env": not part of a skill, and where
//     credentials live), a symlink that leads out of skillDir, a FIFO, device or socket, a
//     file the process may not read;
//   - [ErrNotFound]: no such file, or no skillDir;
//   - [ErrTooLarge]: larger than max.
func ReadResource(skillDir, rel string, max int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultResourceLimit
	}
	clean, rerr := cleanRel(rel)
	if rerr != nil {
		return nil, rerr
	}
	root, err := os.OpenRoot(skillDir)
	if err != nil {
		return nil, osError(".", err)
	}
	defer root.Close()
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. Anything but a
	// regular file is refused after the open, on the file actually opened.
	f, err := root.OpenFile(clean, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, osError(rel, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, osError(rel, err)
	}
	switch {
	case st.IsDir():
		return nil, &ResourceError{Path: rel, Kind: ErrInvalid, Msg: "is a directory, not a file"}
	case !st.Mode().IsRegular():
		return nil, &ResourceError{Path: rel, Kind: ErrDenied, Msg: fmt.Sprintf("is not a regular file (%s)", st.Mode().Type())}
	case st.Size() > max:
		return nil, &ResourceError{Path: rel, Kind: ErrTooLarge, Msg: fmt.Sprintf("%d bytes is more than the %d allowed", st.Size(), max)}
	}
	// The file may grow between Stat and Read: read at most max+1 to notice.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, osError(rel, err)
	}
	if int64(len(data)) > max {
		return nil, &ResourceError{Path: rel, Kind: ErrTooLarge, Msg: fmt.Sprintf("more than the %d bytes allowed", max)}
	}
	return data, nil
}

// cleanRel checks a resource path and returns it without "." and empty segments.
func cleanRel(rel string) (string, *ResourceError) {
	invalid := func(msg string) (string, *ResourceError) {
		return "", &ResourceError{Path: rel, Kind: ErrInvalid, Msg: msg}
	}
	switch {
	case rel == "":
		return invalid("the path is empty")
	case len(rel) > maxRelPath:
		return invalid(fmt.Sprintf("the path is longer than %d bytes", maxRelPath))
	case strings.IndexByte(rel, 0) >= 0:
		return invalid("the path contains a NUL byte")
	case strings.IndexByte(rel, '\\') >= 0:
		return invalid(`the path contains "\"; separate directories with "/"`)
	case !utf8.ValidString(rel):
		return invalid("the path is not valid UTF-8")
	case strings.HasPrefix(rel, "/"):
		return invalid("the path is absolute; give it relative to the skill's directory")
	}
	var segs []string
	for _, s := range strings.Split(rel, "/") {
		switch {
		case s == "" || s == ".":
			continue
		case s == "..":
			return invalid(`the path contains ".."`)
		case strings.HasPrefix(s, "."):
			return "", &ResourceError{Path: rel, Kind: ErrDenied, Msg: "hidden files are not part of a skill"}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return invalid("the path names the skill's directory, not a file")
	}
	return strings.Join(segs, "/"), nil
}

// osError maps an error of the os package to a *ResourceError. os.Root reports a path that leads
// out of the root with an error of its own, not exported: it is recognised by its text, as the
// host functions do.
func osError(rel string, err error) *ResourceError {
	e := &ResourceError{Path: rel, Err: err}
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		e.Kind, e.Msg = ErrNotFound, "no such file"
	case strings.Contains(err.Error(), "escapes from parent"):
		e.Kind, e.Msg = ErrDenied, "leads outside the skill's directory"
	case errors.Is(err, fs.ErrPermission):
		e.Kind, e.Msg = ErrDenied, "permission denied"
	case errors.Is(err, syscall.ELOOP):
		e.Kind, e.Msg = ErrDenied, "too many levels of symbolic links"
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			e.Msg = pe.Err.Error() // the bare reason, without the host path
		} else {
			e.Msg = "cannot be read"
		}
	}
	if rel == "." && e.Kind == ErrNotFound {
		e.Msg = "the skill's directory does not exist"
	}
	return e
}
