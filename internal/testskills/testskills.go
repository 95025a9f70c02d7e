// Package testskills lists a skills directory the way a reader of the repository would, for the
// tests of the packages that serve the bundled skills. A test of "every bundled skill" derives
// what it expects from the directory, so adding a skill breaks none of them, while a listing that
// leaves one out or adds one still fails. It reads file names only, never through the code under
// test: the rules here (what makes a skill, how its tool is named) are restated on purpose.
package testskills

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/spec"
)

// Manifests are the names a skill's manifest may have; a fresh slice each call.
func Manifests() []string { return spec.ManifestFiles() }

// IDs lists, in name order, the directories of dir holding any of files.
//
// # Errors
//
// An unreadable dir, or a file whose presence cannot be told (any error but "does not exist").
func IDs(dir string, files ...string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		has, err := holdsAny(filepath.Join(dir, e.Name()), files)
		if err != nil {
			return nil, err
		}
		if has {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// holdsAny reports whether dir holds any of files.
func holdsAny(dir string, files []string) (bool, error) {
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

// Skills are the ids of every skill in dir: the directories holding a manifest or a SKILL.md.
func Skills(dir string) ([]string, error) { return IDs(dir, append(Manifests(), "SKILL.md")...) }

// Executable are the ids of the skills in dir that run: those with a manifest.
func Executable(dir string) ([]string, error) { return IDs(dir, Manifests()...) }

// WithSkillMD are the ids of the skills in dir that have a SKILL.md.
func WithSkillMD(dir string) ([]string, error) { return IDs(dir, "SKILL.md") }

// Instructions lists the instruction skills of dir: a SKILL.md and no manifest.
func Instructions(dir string) ([]string, error) {
	md, err := WithSkillMD(dir)
	if err != nil {
		return nil, err
	}
	exe, err := Executable(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range md {
		if !slices.Contains(exe, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// Tool is the name of skill id's tool: "skill_" + id with '-' written '_'.
func Tool(id string) string { return "skill_" + strings.ReplaceAll(id, "-", "_") }

// Tools are the tool names of the executable skills in dir, in the order of their ids.
func Tools(dir string) ([]string, error) {
	ids, err := Executable(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = Tool(id)
	}
	return names, nil
}

// Must is list(dir), failing t on an error or an empty list: a test of every skill in dir that
// finds none proves nothing. Each package's wrappers call it with its own dir.
func Must(t testing.TB, dir string, list func(dir string) ([]string, error)) []string {
	t.Helper()
	got, err := list(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatalf("%s holds none of the skills this test lists", dir)
	}
	return got
}
