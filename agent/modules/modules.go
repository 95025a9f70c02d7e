// Package modules reads the programs a skill declares in Autobyteus' layout,
// modules/<name>/module.json beside its runner, and runs them: a module is a program of the skill
// (run as run_skill_script runs one, in the sandbox, under the skill's programs' grant) that takes
// {"args": {...}} as JSON on its standard input and prints its result as JSON, with arguments its
// module.json declares and that are checked as a manifest's parameters are.
//
//	modules/image_gen/module.json
//	{"name": "image_gen", "description": "...", "command": ["python", "run.py"],
//	 "arguments": [{"name": "prompt", "type": "string", "required": true}]}
//
// The [RUN_MODULE] protocol (package runmodule) resolves a block's name to a module when it names
// no tool or skill, within the skills the caller's catalog shows.
package modules

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// Bounds of what a skill's modules may make the host read.
const (
	// MaxModules is the most modules of one skill that are read; a skill with more is refused.
	MaxModules = 64
	// MaxManifestBytes bounds one module.json.
	MaxManifestBytes = 64 << 10
)

// Dir is the directory of a skill that holds its modules, one directory each.
const Dir = "modules"

// ManifestFile is a module's manifest, in its directory.
const ManifestFile = "module.json"

// Module is one module of a skill.
type Module struct {
	// Name is the module's name: its directory's, which module.json's "name" must repeat.
	Name        string `json:"name"`
	Description string `json:"description"`
	// Program is the module's runner, by its path in the skill ("modules/image_gen/run.py"), and
	// Argv what its command gives it after the program.
	Program string   `json:"program"`
	Argv    []string `json:"argv,omitempty"`
	// Parameters is the arguments' JSON Schema, as a manifest's parameters are normalised.
	Parameters json.RawMessage `json:"parameters"`

	schema *spec.Schema
}

// Schema is the compiled Parameters.
func (m *Module) Schema() *spec.Schema { return m.schema }

// interpreters are the commands a module may name before its program: each runs the program in
// the sandbox by its extension, whichever the command says.
var interpreters = []string{"python", "python3", "node", "deno", "tsx", "ts-node"}

// Load reads the modules of the skill at dir, by name. A skill without a modules directory has
// none. Every module.json is checked whole: the error lists each problem of each file (a
// *spec.SkillError of *spec.ManifestError), naming the file and the field.
func Load(dir string) ([]Module, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	entries, err := readDir(root, Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var mods []Module
	var problems []*spec.ManifestError
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if len(mods) == MaxModules {
			return nil, &spec.SkillError{Problems: []*spec.ManifestError{{Path: Dir, Msg: fmt.Sprintf("more than %d modules", MaxModules), Hint: "split the skill"}}}
		}
		file := path.Join(Dir, e.Name(), ManifestFile)
		data, err := skillmd.ReadResource(dir, file, MaxManifestBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a directory of modules/ without a manifest is not a module
		}
		if err != nil {
			problems = append(problems, &spec.ManifestError{Path: file, Msg: err.Error()})
			continue
		}
		m, errs := parse(e.Name(), file, data)
		problems = append(problems, errs...)
		if len(errs) == 0 {
			mods = append(mods, m)
		}
	}
	if len(problems) > 0 {
		return nil, &spec.SkillError{Problems: problems}
	}
	return mods, nil
}

// maxEntries bounds the entries of modules/ that are read: the modules, and anything beside them.
const maxEntries = 1024

// readDir lists dir of root, sorted by name, refusing one of more than maxEntries entries
// rather than read it all.
func readDir(root *os.Root, dir string) ([]fs.DirEntry, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(maxEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(entries) > maxEntries {
		return nil, &spec.SkillError{Problems: []*spec.ManifestError{{Path: dir, Msg: fmt.Sprintf("holds more than %d entries", maxEntries), Hint: "keep one directory per module there"}}}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// parse reads the module.json (file) of the module in directory name.
func parse(name, file string, data []byte) (Module, []*spec.ManifestError) {
	c := &spec.Checker{Path: file}
	d, bounds, err := spec.ParseDoc(data, false)
	if err != nil {
		if !c.Syntax(err) {
			c.Add("", "check the syntax near the position given", "cannot parse: %v", err)
		}
		return Module{}, c.Problems
	}
	c.AddBounds(bounds)
	c.Known(d, "", "name", "description", "command", "working_dir", "arguments")
	m := Module{Name: c.Str(d, "", "name", true), Description: c.Str(d, "", "description", false)}
	if m.Name != "" && m.Name != name {
		c.Add("name", fmt.Sprintf("rename the directory or write %q", name), "is %q, but the module's directory is %s/%s", m.Name, Dir, name)
	}
	workDir := path.Join(Dir, name)
	if w := c.Str(d, "", "working_dir", false); w != "" {
		if clean := path.Clean(w); clean != w || path.IsAbs(w) || clean == ".." || strings.HasPrefix(clean, "../") {
			c.Add("working_dir", `a path in the skill, such as "modules/`+name+`"`, "%q is not a clean relative path", w)
		} else {
			workDir = clean
		}
	}
	m.Program, m.Argv = command(c, d["command"], workDir)
	m.Parameters = arguments(c, d["arguments"])
	m.schema = c.Schema
	return m, c.Problems
}

// command reads "command" (["python", "run.py", ...]): the program, by its path in the skill,
// and the arguments after it. Without one, the runner is run.py of the module's directory.
func command(c *spec.Checker, v any, workDir string) (string, []string) {
	if v == nil {
		return path.Join(workDir, "run.py"), nil
	}
	list, ok := v.([]any)
	words := make([]string, 0, len(list))
	for _, w := range list {
		s, isStr := w.(string)
		ok = ok && isStr
		words = append(words, s)
	}
	if !ok || len(words) == 0 {
		c.Add("command", `write ["python", "run.py"]`, "must be a list of strings, the interpreter then the program")
		return "", nil
	}
	if slices.Contains(interpreters, words[0]) {
		words = words[1:]
	}
	if len(words) == 0 || !slices.Contains(spec.ProgramExtensions(), path.Ext(words[0])) {
		c.Add("command", `write ["python", "run.py"]: Skillbox runs a module's program in its sandbox by its extension`,
			"names no program of %s (%s files)", strings.Join(interpreters, ", "), strings.Join(spec.ProgramExtensions(), ", "))
		return "", nil
	}
	prog := path.Clean(path.Join(workDir, words[0]))
	if strings.HasPrefix(prog, "../") || path.IsAbs(words[0]) {
		c.Add("command", "name a file of the skill", "%q leads out of the skill", words[0])
		return "", nil
	}
	return prog, words[1:]
}

// arguments reads "arguments" ([{"name": "prompt", "type": "string", "required": true}, ...])
// and checks them as a manifest's parameters in their map form, field names and all.
func arguments(c *spec.Checker, v any) json.RawMessage {
	if v == nil {
		return c.Parameters(map[string]any{}) // no arguments: compiled, so a call with some is refused
	}
	list, ok := v.([]any)
	if !ok {
		c.Add("arguments", `write [{"name": "prompt", "type": "string", "required": true}]`, "must be a list, not %s", spec.TypeName(v))
		return c.Parameters(map[string]any{})
	}
	byName := map[string]any{}
	for i, a := range list {
		field := fmt.Sprintf("arguments[%d]", i)
		obj, ok := a.(map[string]any)
		if !ok {
			c.Add(field, `write {"name": "prompt", "type": "string"}`, "must be an object, not %s", spec.TypeName(a))
			continue
		}
		name, _ := obj["name"].(string)
		if name == "" {
			c.Add(field+".name", "", "is required: the argument's name")
			continue
		}
		if _, dup := byName[name]; dup {
			c.Add(field+".name", "", "%q is declared twice", name)
			continue
		}
		rest := make(map[string]any, len(obj))
		for k, v := range obj {
			if k != "name" {
				rest[k] = v
			}
		}
		byName[name] = rest
	}
	n := len(c.Problems)
	raw := c.Parameters(byName)
	for _, p := range c.Problems[n:] { // named as this file names them
		if rest, ok := strings.CutPrefix(p.Field, "parameters"); ok {
			p.Field = "arguments" + rest
		}
	}
	return raw
}
