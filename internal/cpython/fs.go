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

// checkModule checks that module, Program.Module, is a dotted module name whose file is script
// (Program.Script): "pkg.tool" of ".../pkg/tool.py", "pkg.__main__" of ".../pkg/__main__.py".
// The driver finds the module's root on sys.path by going up one directory per name from the
// file, which this keeps inside the skill.
func checkModule(module, script string) error {
	for _, part := range strings.Split(module, ".") {
		if !isIdentifier(part) {
			return fmt.Errorf("cpython: Program.Module %q is not a module name (names separated by dots)", module)
		}
	}
	if !strings.HasSuffix("/"+script, "/"+strings.ReplaceAll(module, ".", "/")+".py") {
		return fmt.Errorf("cpython: Program.Module %q is not the module of Program.Script %q", module, script)
	}
	return nil
}

// isIdentifier reports whether s is an ASCII Python identifier (module names of skills are).
func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
