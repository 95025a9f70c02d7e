package cpython

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tetratelabs/wazero"
)

// mounts makes the run's file system: the standard library first (see StdlibPath), the skill's
// directory read-only at SkillPath through an os.Root (a symlink inside it that points out of it
// does not open), then whatever p.FSConfig adds. The returned func releases the os.Root.
//
// # Errors
//
// p.Dir missing or not a directory.
func (c *Compiled) mounts(p *Program) (wazero.FSConfig, func(), error) {
	root, err := os.OpenRoot(p.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("cpython: Program.Dir: the skill's directory: %w", err)
	}
	fsc := wazero.NewFSConfig().WithFSMount(c.stdlib, StdlibPath).WithFSMount(root.FS(), SkillPath)
	if p.FSConfig != nil {
		fsc = p.FSConfig(fsc)
	}
	return fsc, func() { _ = root.Close() }, nil
}

// skillFile checks that name, a Program field, is a .py file path inside the skill's directory,
// and returns its guest path.
func skillFile(field, name string) (string, error) {
	if !fs.ValidPath(name) || name == "." {
		return "", fmt.Errorf("cpython: Program.%s %q: give a slash-separated path inside the skill's directory, without . or .. elements", field, name)
	}
	if !strings.HasSuffix(name, ".py") {
		return "", fmt.Errorf("cpython: Program.%s %q: only Python (.py) files run in the Python interpreter", field, name)
	}
	return SkillPath + "/" + name, nil
}
