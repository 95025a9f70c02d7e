package wasifs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// PrivateTmp makes a fresh, empty, writable directory for one run and mounts it with opts
// (Writable is implied; the budget is required as for [Dir]). cleanup closes the mount and
// removes the directory with all the guest left in it, directories it made read-only
// included; call it once the run is over (calling it again does nothing).
//
// # Errors
//
// [ErrOptions] for a missing budget; the error of [os.MkdirTemp] when the host's temporary
// directory cannot be written.
func PrivateTmp(opts Options) (fsys *FS, cleanup func(), err error) {
	opts.Writable = true
	if err := opts.validate("private /tmp"); err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "skillbox-tmp-")
	if err != nil {
		return nil, nil, fmt.Errorf("private /tmp: %w", err)
	}
	fsys, err = Dir(dir, opts)
	if err != nil {
		_ = removeTree(dir)
		return nil, nil, err
	}
	var once sync.Once
	return fsys, func() {
		once.Do(func() {
			_ = fsys.Close()
			_ = removeTree(dir)
		})
	}, nil
}

// removeTree removes dir and everything below it. When a plain RemoveAll fails (a directory
// without write or search permission), it gives the owner back every directory's permissions
// and tries again. The guest cannot make symlinks, and filepath.WalkDir does not follow them
// anyway, so the walk stays inside dir.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = os.Chmod(dir, 0o700)
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
