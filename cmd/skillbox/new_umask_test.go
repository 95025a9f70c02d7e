//go:build unix

package main

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// TestNewFollowsUmask: a new skill's directories and files get 0777 and 0666 less the umask, like
// any mkdir and any editor's file, not 0700 from a temporary directory or fixed modes (umask 002
// tells 0666 from a fixed 0644). The umask is
// the process's: not parallel.
func TestNewFollowsUmask(t *testing.T) {
	for _, umask := range []int{0o027, 0o002} {
		newWithUmask(t, umask)
	}
}

// newWithUmask creates a skill of a few languages under umask and checks every mode.
func newWithUmask(t *testing.T, umask int) {
	t.Helper()
	old := syscall.Umask(umask)
	defer syscall.Umask(old)
	skills := filepath.Join(outside(t), "skills")
	for _, lang := range []string{"go", "c", "rust", "python"} {
		r := cli(t, "", "--skills", skills, "new", "perm-"+lang, "--lang", lang)
		if r.code != exitOK {
			t.Fatalf("new: %s", r)
		}
		err := filepath.WalkDir(filepath.Join(skills, "perm-"+lang), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o666) &^ fs.FileMode(umask)
			if d.IsDir() {
				want = fs.ModeDir | 0o777&^fs.FileMode(umask)
			}
			if info.Mode() != want {
				t.Errorf("%s: mode %v, want %v (umask %03o)", p, info.Mode(), want, umask)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
