package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
)

// The compilation cache holds native code that the process maps and executes. wazero trusts any
// directory it is given and checks its entries only with a CRC, so whoever can write to the cache
// directory runs code inside Skillbox. The checks here make sure nobody but the current user can:
// every directory Skillbox creates or reuses for the cache is the user's own, has mode 0700 and is
// not a symbolic link, and the directory holding the topmost of them cannot be used to swap it.
// There is no shared fallback (such as a directory under $TMPDIR): without a user cache directory,
// or when the default one fails these checks, Skillbox runs without the on-disk cache.

// CacheDirError says why a compilation cache directory was refused: runtime.CacheDirError's
// fields, in the same order, which the runtime converts it into.
type CacheDirError struct {
	Path  string
	Found string
	Fix   string
	Err   error
}

func (e *CacheDirError) Error() string {
	msg := "compilation cache: " + e.Path + " " + e.Found
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

func (e *CacheDirError) Unwrap() error { return e.Err }

// OpenCacheDir returns the directory for wazero's compilation cache, checked and created as
// described above, or "" to run without the on-disk cache. An explicit directory
// (runtime.Config.CacheDir) that fails is an error: the operator asked for it, and running without
// would surprise them. The default directory that fails, or no user cache directory at all, is a
// warning on logger.
func OpenCacheDir(ctx context.Context, explicit string, logger *slog.Logger) (string, error) {
	if explicit != "" {
		dir, err := secureCacheDir(explicit, 1)
		if err == nil {
			err = probeCache(ctx, dir)
		}
		return dir, err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		logger.Warn("compilation cache off: no user cache directory, and Skillbox uses no shared fallback; set XDG_CACHE_HOME or --cache-dir (Config.CacheDir) to enable it",
			"err", err)
		return "", nil
	}
	// <user cache dir>/skillbox and .../skillbox/wazero are Skillbox's own even when they exist.
	dir, err := secureCacheDir(filepath.Join(base, "skillbox", "wazero"), 2)
	if err == nil {
		err = probeCache(ctx, dir)
	}
	if err != nil {
		logger.Warn("compilation cache off: the default cache directory is refused; fix it, or set --cache-dir (Config.CacheDir) to a directory of your own",
			"err", err)
		return "", nil
	}
	return dir, nil
}

var cacheMu sync.Mutex

// NewCache opens a wazero compilation cache handle over dir, or returns nil for "".
func NewCache(dir string) (wazero.CompilationCache, error) {
	if dir == "" {
		return nil, nil
	}
	// wazero v1.12's first version lookup races when caches are made concurrently
	// (wazero#2532): make them one at a time.
	cacheMu.Lock()
	defer cacheMu.Unlock()
	return wazero.NewCompilationCacheWithDir(dir)
}

// probeCache opens and closes a wazero cache over dir, so that an unusable directory fails New
// rather than the first run.
func probeCache(ctx context.Context, dir string) error {
	cache, err := NewCache(dir)
	if err != nil {
		return &CacheDirError{Path: dir, Found: "cannot be used by wazero", Err: err}
	}
	return cache.Close(ctx)
}

// secureCacheDir makes dir absolute, creates what is missing of it and checks it. The last owned
// elements of dir are Skillbox's to check even when they exist; so are the missing ancestors it
// creates, and the subdirectory wazero keeps its files in. The directory above the topmost of
// these must not let anyone else replace it. It returns the absolute dir.
func secureCacheDir(dir string, owned int) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", &CacheDirError{Path: dir, Found: "cannot be made absolute", Err: err}
	}
	// Collect the elements, innermost first: the owned ones, then missing ancestors.
	var elems []string
	for p := dir; ; {
		elems = append(elems, p)
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		if len(elems) >= owned {
			if _, err := os.Lstat(parent); !errors.Is(err, fs.ErrNotExist) {
				break
			}
		}
		p = parent
	}
	top := elems[len(elems)-1]
	if parent := filepath.Dir(top); parent != top {
		if err := checkParent(parent, top); err != nil {
			return "", err
		}
	}
	for i := len(elems) - 1; i >= 0; i-- {
		if err := EnsurePrivateDir(elems[i]); err != nil {
			return "", err
		}
	}
	// wazero would create this one itself (inside a directory only we can write, so with no one
	// else's content); making and checking it here also refuses one left by an older, looser setup.
	if err := EnsurePrivateDir(filepath.Join(dir, WazeroSubdir())); err != nil {
		return "", err
	}
	return dir, nil
}

// EnsurePrivateDir creates path with mode 0700 when it is missing (chmod after mkdir: the umask
// may have taken bits away) and checks it either way.
func EnsurePrivateDir(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// ErrExist: made concurrently (another process sharing the cache); check what is there.
		if err := os.Mkdir(path, 0o700); err == nil {
			if err := os.Chmod(path, 0o700); err != nil {
				return &CacheDirError{Path: path, Found: "was created but its mode cannot be set", Err: err}
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return &CacheDirError{Path: path, Found: "cannot be created", Err: err,
				Fix: "create it yourself with mode 0700 (mkdir -m 700), or choose another directory"}
		}
		fi, err = os.Lstat(path)
	}
	if err != nil {
		return &CacheDirError{Path: path, Found: "cannot be inspected", Err: err}
	}
	return checkPrivateDir(path, fi)
}

// checkPrivateDir refuses anything but a directory of the current user's that only they can use.
// A symbolic link is refused even when it and its target are ours: checking a link safely means
// checking every link of its chain and the directory above its target, and the fix is simple.
func checkPrivateDir(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return &CacheDirError{Path: path, Found: fmt.Sprintf("is a symbolic link (to %s), which Skillbox does not follow in its cache path", target),
			Fix: "point the cache directory (--cache-dir, Config.CacheDir or XDG_CACHE_HOME) at the real directory, or remove the link and let Skillbox create the directory"}
	case !fi.IsDir():
		return &CacheDirError{Path: path, Found: fmt.Sprintf("is not a directory (mode %s)", fi.Mode()),
			Fix: "remove it and let Skillbox create the directory, or choose another directory"}
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return &CacheDirError{Path: path, Found: fmt.Sprintf("is owned by uid %d, not by this process's uid %d", uid, os.Getuid()),
			Fix: "remove it and let Skillbox recreate it, or choose a directory of your own"}
	}
	if checkModes && fi.Mode().Perm()&0o077 != 0 {
		return &CacheDirError{Path: path, Found: fmt.Sprintf("has mode %04o; group and others must have no access", fi.Mode().Perm()),
			Fix: "chmod 700 " + path + ", or remove it and let Skillbox recreate it"}
	}
	return nil
}

// checkParent refuses a directory above the cache (parent of its topmost element top) in which
// someone else could rename or replace top: one owned by another user (root aside), or writable by
// group or others without the sticky bit (with it, as in /tmp, only top's owner can remove top).
// It follows symbolic links: it is not Skillbox's, and the system's own (/tmp on macOS) are links.
func checkParent(parent, top string) error {
	fi, err := os.Stat(parent)
	if err != nil {
		return &CacheDirError{Path: parent, Found: "cannot be inspected", Err: err}
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() && uid != 0 {
		return &CacheDirError{Path: parent, Found: fmt.Sprintf("is owned by uid %d (neither this process's uid %d nor root), who could replace %s", uid, os.Getuid(), top),
			Fix: "choose a cache directory inside a directory of your own"}
	}
	if checkModes && fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return &CacheDirError{Path: parent, Found: fmt.Sprintf("has mode %04o: group or others can write to it without the sticky bit, and so replace %s", fi.Mode().Perm(), top),
			Fix: "chmod go-w " + parent + " (or chmod +t), or choose a cache directory elsewhere"}
	}
	return nil
}

// WazeroSubdir is the name of the directory wazero keeps its files in under the cache directory:
// "wazero-<version>-<GOARCH>-<GOOS>" with the version as wazero v1.12.0 computes it
// (cache.go ensuresFileCache, internal/version.GetWazeroVersion): the require version of the
// last dependency whose path contains github.com/tetratelabs/wazero, else the main module's, else
// "dev" (as in test binaries, whose build info lists no dependencies). Should it ever differ,
// wazero creates its own directory inside ours, mode 0700, which no one else can have planted.
func WazeroSubdir() string {
	v := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if strings.Contains(dep.Path, "github.com/tetratelabs/wazero") {
				v = dep.Version
			}
		}
		if v == "" || v == "(devel)" {
			v = info.Main.Version
		}
	}
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	return "wazero-" + v + "-" + goruntime.GOARCH + "-" + goruntime.GOOS
}
