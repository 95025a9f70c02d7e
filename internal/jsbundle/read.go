package jsbundle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// read reads the skill-relative file p through the root, counted against the bounds, and
// remembers its digest. O_NONBLOCK keeps a FIFO from blocking the open; the Stat of the file
// opened, not of the path, decides that it is a regular file.
func (l *loader) read(p string) (string, error) {
	if err := l.ctx.Err(); err != nil {
		return "", err
	}
	f, err := l.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			l.probed(p, "absent")
			return "", &Error{Kind: ErrNotFound, File: p, Msg: p + ": no such file"}
		case escapes(err):
			return "", &Error{Kind: ErrOutside, File: p, Msg: p + " is a symlink that leads out of the skill's directory", Hint: "copy the file into the skill instead of linking to it"}
		}
		return "", &Error{Kind: ErrDenied, File: p, Msg: p + ": " + bareReason(err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", &Error{Kind: ErrDenied, File: p, Msg: p + ": " + bareReason(err)}
	}
	if !st.Mode().IsRegular() {
		return "", &Error{Kind: ErrDenied, File: p, Msg: p + " is " + kindOf(st.Mode()) + ", not a regular file"}
	}
	left, err := l.reserve(p, st.Size())
	if err != nil {
		return "", err
	}
	// The file may grow after Stat: read at most what the budget has left, plus one to notice.
	data, err := io.ReadAll(io.LimitReader(f, left+1))
	if err != nil {
		return "", &Error{Kind: ErrDenied, File: p, Msg: p + ": " + bareReason(err)}
	}
	if int64(len(data)) > left {
		return "", l.tooMuch(p)
	}
	sum := sha256.Sum256(data)
	l.mu.Lock()
	l.bytes += int64(len(data)) - st.Size()
	l.sums[p] = hex.EncodeToString(sum[:])
	l.mu.Unlock()
	return string(data), nil
}

// reserve counts a file of size bytes against the bounds and returns how many bytes the budget
// had left for it.
func (l *loader) reserve(p string, size int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.sums) >= l.opts.MaxFiles {
		return 0, &Error{Kind: ErrTooLarge, File: p, Msg: fmt.Sprintf("reading %s: the skill imports more than %d files", p, l.opts.MaxFiles), Hint: "vendor less code in lib/ or bundle it into fewer files"}
	}
	left := l.opts.MaxSourceBytes - l.bytes
	if size > left {
		return 0, l.tooMuch(p)
	}
	l.bytes += size
	l.sums[p] = "" // counted; the digest follows
	return left, nil
}

func (l *loader) tooMuch(p string) error {
	return &Error{Kind: ErrTooLarge, File: p, Msg: fmt.Sprintf("reading %s: the skill's sources are more than the %d bytes allowed", p, l.opts.MaxSourceBytes), Hint: "vendor less code in lib/"}
}
