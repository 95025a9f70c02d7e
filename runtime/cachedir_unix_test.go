//go:build unix

package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
)

// nobody is the uid the tests give to "another user" (as root, with chown).
const nobody = 65534

// newLogged calls NewShared with sc, then New with cfg on it, each with a logger writing into
// the returned buffer, closing both at the end of the test.
func newLogged(t *testing.T, cfg Config, sc SharedConfig) (*Runtime, *bytes.Buffer, error) {
	t.Helper()
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	sc.Logger, cfg.Logger = logger, logger
	sh, err := NewShared(context.Background(), sc)
	if err != nil {
		return nil, &log, err
	}
	t.Cleanup(func() { sh.Close(context.Background()) })
	cfg.Shared = sh
	rt, err := New(context.Background(), cfg)
	if rt != nil {
		t.Cleanup(func() { rt.Close(context.Background()) })
	}
	return rt, &log, err
}

// needRoot skips a case that has to give a file to another user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
}

// unsetenv unsets key for the rest of the test (t.Setenv restores it after).
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "")
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, path string) {
	t.Helper()
	if err := os.Lchown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
}

// wantPrivate checks that each path is a directory of ours with mode 0700.
func wantPrivate(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Error(err)
			continue
		}
		uid := int(fi.Sys().(*syscall.Stat_t).Uid)
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 || uid != os.Getuid() {
			t.Errorf("%s: mode %s, uid %d; want a directory, 0700, uid %d", p, fi.Mode(), uid, os.Getuid())
		}
	}
}

// runEcho loads the echo fixture into a fresh runtime's skills and checks that a run works.
func runEcho(t *testing.T, rt *Runtime) {
	t.Helper()
	res, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(`{}`), Who: testAdmin})
	if err != nil || !res.Success {
		t.Fatalf("run: %v %+v", err, res)
	}
}

// With neither HOME nor XDG_CACHE_HOME there is no user cache directory: the runtime runs without
// the on-disk cache, says so, and creates nothing in the shared temporary directory.
func TestCacheDirNoUserCacheDir(t *testing.T) {
	unsetenv(t, "HOME")
	unsetenv(t, "XDG_CACHE_HOME")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	skills := t.TempDir()
	fixture(t, skills, "echo", simple("echo", ""), "echo")

	rt, log, err := newLogged(t, Config{SkillDirs: []string{skills}}, SharedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// No shared cache: only the Shared's own, private one (random name, 0700) that compiles
	// hand code over through, removed by the Shared's Close.
	checkPrivateCache(t, rt)
	for _, want := range []string{"level=WARN", "compilation cache off", "XDG_CACHE_HOME", "--cache-dir"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log does not contain %q:\n%s", want, log)
		}
	}
	runEcho(t, rt)
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rt.shared.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("TMPDIR has %v (%v) after Close, want nothing", entries, err)
	}
}

// checkPrivateCache: without a user cache, a Runtime's cache is its own private directory, or
// none (when it compiles in its own process).
func checkPrivateCache(t *testing.T, rt *Runtime) {
	t.Helper()
	if rt.cacheDir == "" {
		return
	}
	st, err := os.Stat(rt.cacheDir)
	if rt.cacheDir != rt.privateCache || err != nil || st.Mode().Perm() != 0o700 || !strings.Contains(filepath.Base(rt.cacheDir), "skillbox-compile-") {
		t.Errorf("cache dir %q (%v), want none or the Runtime's private one", rt.cacheDir, err)
	}
}

// A cache directory that someone else could write to, or could have filled, is refused: the
// default one with a warning (and the runtime runs without the cache), an explicit one with an
// error. Each case lays out base (XDG_CACHE_HOME for the default; the cache directory is
// base/skillbox/wazero either way) and returns the path to be named and what was found there.
func TestCacheDirRefused(t *testing.T) {
	const target = "skillbox/wazero"
	tests := []struct {
		name string
		root bool // chowns to another user
		// explicitOK: the explicit directory base/skillbox/wazero does not own base/skillbox, so
		// only the default refuses this case.
		explicitOK bool
		given      func(t *testing.T, base string) (path, found string)
	}{
		{name: "mode 0755", given: func(t *testing.T, base string) (string, string) {
			p := filepath.Join(base, target)
			mkdir(t, p, 0o755)
			return p, "has mode 0755"
		}},
		{name: "mode 0770", given: func(t *testing.T, base string) (string, string) {
			p := filepath.Join(base, target)
			mkdir(t, p, 0o770)
			return p, "has mode 0770"
		}},
		{name: "mode 0701", given: func(t *testing.T, base string) (string, string) {
			p := filepath.Join(base, target)
			mkdir(t, p, 0o701)
			return p, "has mode 0701"
		}},
		{name: "regular file", given: func(t *testing.T, base string) (string, string) {
			p := filepath.Join(base, target)
			mkdir(t, filepath.Dir(p), 0o700)
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p, "is not a directory (mode -rw-------)"
		}},
		{name: "owned by another user", root: true, given: func(t *testing.T, base string) (string, string) {
			p := filepath.Join(base, target)
			mkdir(t, p, 0o700)
			chown(t, p)
			return p, "is owned by uid 65534"
		}},
		{name: "symlink to another user's directory", root: true, given: func(t *testing.T, base string) (string, string) {
			theirs := filepath.Join(base, "theirs")
			mkdir(t, theirs, 0o700)
			chown(t, theirs)
			p := filepath.Join(base, target)
			mkdir(t, filepath.Dir(p), 0o700)
			if err := os.Symlink(theirs, p); err != nil {
				t.Fatal(err)
			}
			return p, "is a symbolic link (to " + theirs + ")"
		}},
		{name: "symlink to our own directory", given: func(t *testing.T, base string) (string, string) {
			ours := filepath.Join(base, "ours")
			mkdir(t, ours, 0o700)
			p := filepath.Join(base, target)
			mkdir(t, filepath.Dir(p), 0o700)
			if err := os.Symlink(ours, p); err != nil {
				t.Fatal(err)
			}
			return p, "is a symbolic link"
		}},
		{name: "wazero's subdirectory mode 0777", given: func(t *testing.T, base string) (string, string) {
			p := filepath.Join(base, target, engine.WazeroSubdir())
			mkdir(t, p, 0o777)
			return p, "has mode 0777"
		}},
		{name: "wazero's subdirectory owned by another user", root: true, given: func(t *testing.T, base string) (string, string) {
			p := filepath.Join(base, target, engine.WazeroSubdir())
			mkdir(t, p, 0o700)
			chown(t, p)
			return p, "is owned by uid 65534"
		}},
		{name: "skillbox mode 0755", explicitOK: true, given: func(t *testing.T, base string) (string, string) {
			p := filepath.Join(base, "skillbox")
			mkdir(t, filepath.Join(p, "wazero"), 0o700)
			mkdir(t, p, 0o755)
			return p, "has mode 0755"
		}},
		{name: "parent world-writable without sticky bit", given: func(t *testing.T, base string) (string, string) {
			mkdir(t, base, 0o777)
			return base, "has mode 0777: group or others can write to it without the sticky bit"
		}},
		{name: "parent group-writable without sticky bit", given: func(t *testing.T, base string) (string, string) {
			mkdir(t, base, 0o770)
			return base, "has mode 0770: group or others can write to it"
		}},
		{name: "parent owned by another user", root: true, given: func(t *testing.T, base string) (string, string) {
			chown(t, base)
			return base, "is owned by uid 65534"
		}},
	}
	for _, tc := range tests {
		for _, explicit := range []bool{false, true} {
			name := tc.name + "/default"
			if explicit {
				name = tc.name + "/explicit"
			}
			t.Run(name, func(t *testing.T) {
				if tc.root {
					needRoot(t)
				}
				base := filepath.Join(t.TempDir(), "base")
				mkdir(t, base, 0o700)
				path, found := tc.given(t, base)
				cfg, sc := Config{}, SharedConfig{}
				if explicit {
					sc.CacheDir = filepath.Join(base, target)
				} else {
					t.Setenv("XDG_CACHE_HOME", base)
				}
				rt, log, err := newLogged(t, cfg, sc)
				switch {
				case explicit && tc.explicitOK:
					if err != nil {
						t.Fatalf("explicit %s refused: %v", sc.CacheDir, err)
					}
				case explicit:
					var cde *CacheDirError
					if !errors.As(err, &cde) || cde.Path != path || !strings.Contains(err.Error(), found) {
						t.Fatalf("err = %v, want a CacheDirError naming %s, %q", err, path, found)
					}
				default:
					if err != nil {
						t.Fatal(err)
					}
					checkPrivateCache(t, rt)
					for _, want := range []string{"level=WARN", "compilation cache off", path, found} {
						if !strings.Contains(log.String(), want) {
							t.Errorf("log does not contain %q:\n%s", want, log)
						}
					}
				}
			})
		}
	}
}

// A cache directory whose parent has the sticky bit (like /tmp) is used, though others can write
// to the parent: they cannot remove or rename what is ours in it.
func TestCacheDirStickyParent(t *testing.T) {
	for _, explicit := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "explicit"}[explicit], func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "base")
			mkdir(t, base, 0o777|fs.ModeSticky)
			cfg, sc := Config{}, SharedConfig{}
			if explicit {
				sc.CacheDir = filepath.Join(base, "skillbox", "wazero")
			} else {
				t.Setenv("XDG_CACHE_HOME", base)
			}
			rt, log, err := newLogged(t, cfg, sc)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(base, "skillbox", "wazero"); rt.cacheDir != want {
				t.Fatalf("cache dir %q, want %q\n%s", rt.cacheDir, want, log)
			}
			wantPrivate(t, filepath.Join(base, "skillbox"), rt.cacheDir, filepath.Join(rt.cacheDir, engine.WazeroSubdir()))
		})
	}
}

// Every directory the runtime creates for the cache is 0700, whatever the umask: missing elements
// of an explicit directory, missing elements of the default one (the user cache directory itself
// included), and wazero's subdirectory.
func TestCacheDirCreatesPrivate(t *testing.T) {
	for _, umask := range []int{0, 0o022, 0o277} {
		for _, explicit := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/umask %03o", map[bool]string{false: "default", true: "explicit"}[explicit], umask), func(t *testing.T) {
				root := t.TempDir()
				skills := t.TempDir()
				fixture(t, skills, "echo", simple("echo", ""), "echo") // before the umask: t.TempDir must be able to remove it
				old := syscall.Umask(umask)
				t.Cleanup(func() { syscall.Umask(old) })
				cfg, sc := Config{SkillDirs: []string{skills}}, SharedConfig{}
				var created []string
				if explicit {
					sc.CacheDir = filepath.Join(root, "a", "b", "c")
					created = []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), sc.CacheDir}
				} else {
					xdg := filepath.Join(root, "home", ".cache")
					t.Setenv("XDG_CACHE_HOME", xdg)
					created = []string{filepath.Join(root, "home"), xdg, filepath.Join(xdg, "skillbox"), filepath.Join(xdg, "skillbox", "wazero")}
				}
				rt, log, err := newLogged(t, cfg, sc)
				if err != nil {
					t.Fatal(err)
				}
				if want := created[len(created)-1]; rt.cacheDir != want {
					t.Fatalf("cache dir %q, want %q\n%s", rt.cacheDir, want, log)
				}
				wantPrivate(t, append(created, filepath.Join(rt.cacheDir, engine.WazeroSubdir()))...)
				// The subdirectory checked is the one wazero fills: after a compilation the cache
				// directory holds exactly it, with the compiled code inside.
				runEcho(t, rt)
				entries, err := os.ReadDir(rt.cacheDir)
				if err != nil {
					t.Fatal(err)
				}
				// ... and, when a child compiled it, the directory of its marks, private too; and the
				// skill index's (index.go), private too.
				var names []string
				for _, e := range entries {
					if e.Name() == "index" {
						wantPrivate(t, filepath.Join(rt.cacheDir, "index"))
						continue
					}
					names = append(names, e.Name())
				}
				if strings.Join(names, " ") != engine.WazeroSubdir() && strings.Join(names, " ") != engine.CompiledMarks+" "+engine.WazeroSubdir() {
					t.Fatalf("cache dir holds %v, want %s (and %s)", names, engine.WazeroSubdir(), engine.CompiledMarks)
				}
				if len(names) == 2 {
					wantPrivate(t, filepath.Join(rt.cacheDir, engine.CompiledMarks))
				}
				if files, err := os.ReadDir(filepath.Join(rt.cacheDir, engine.WazeroSubdir())); err != nil || len(files) == 0 {
					t.Fatalf("wazero's subdirectory holds %v (%v), want the compiled module", files, err)
				}
			})
		}
	}
}
