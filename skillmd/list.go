package skillmd

import (
	"io/fs"
	"os"
	"strings"

	"github.com/skillbox-dev/skillbox/spec"
)

// DefaultResourceCount is how many paths [ListResources] returns when it is given no bound.
const DefaultResourceCount = 1000

// packageFile reports whether name, at the top of a skill directory, is the package itself, not
// a resource: the manifest or the module (the instructions and the source are told apart below).
func packageFile(name string) bool { return spec.IsManifestFile(name) || name == spec.ModuleFile }

// ListResources returns the files of the skill at skillDir that [ReadResource] would read: the
// slash-separated relative paths of its regular files, at most max of them (max <= 0 means
// [DefaultResourceCount]).
//
// Left out: the package's own files at the top (skill.json, skill.yaml, skill.yml,
// execute.wasm, SKILL.md in any case, the src/ directory), hidden files and directories, anything
// that is not a regular file, and symlinks that lead out of skillDir or to a directory.
//
// The paths are in the order of a walk that reads each directory sorted by name: sorted segment
// by segment, so "a/b" comes before "a-c" (plain string order would put it after), and the
// first max of that order are what is returned when there are more.
//
// # Errors
//
// A [*ResourceError] for skillDir itself (matching [ErrNotFound] when it does not exist);
// subdirectories that cannot be read are skipped.
func ListResources(skillDir string, max int) ([]string, error) {
	if max <= 0 {
		max = DefaultResourceCount
	}
	root, err := os.OpenRoot(skillDir)
	if err != nil {
		return nil, osError(".", err)
	}
	defer root.Close()
	fsys := root.FS()
	out := []string{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // an unreadable subdirectory: skip it
		}
		if p == "." {
			return nil
		}
		name := d.Name()
		top := !strings.Contains(p, "/")
		skip := strings.HasPrefix(name, ".") ||
			(top && (packageFile(name) || strings.EqualFold(name, "SKILL.md") || (name == "src" && d.IsDir())))
		switch {
		case skip && d.IsDir():
			return fs.SkipDir
		case skip || d.IsDir():
			return nil
		case d.Type().IsRegular():
		case d.Type()&fs.ModeSymlink != 0:
			// Followed only within the root (Stat refuses a way out), and only to a file.
			st, err := fs.Stat(fsys, p)
			if err != nil || !st.Mode().IsRegular() {
				return nil
			}
		default:
			return nil
		}
		out = append(out, p)
		if len(out) >= max {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return nil, osError(".", err)
	}
	return out, nil
}
