package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/skillbox-dev/skillbox/internal/testskills"
)

// bundledSkill is one skill of the bundled directory, read from its files the way a reader of
// the repository would, not through the code under test.
type bundledSkill struct {
	id      string
	version string // the manifest's; "" for an instruction skill
	// lang is what runs it: the manifest's runtime, else what its one code file says
	// (execute.wasm: wasm, execute.ts: typescript, ...); "" for an instruction skill.
	lang string
}

// tool is the skill's tool name: "skill_" + id with '-' written '_'.
func (b bundledSkill) tool() string { return testskills.Tool(b.id) }

// kind is "executable", or "instructions" for a skill with no manifest.
func (b bundledSkill) kind() string {
	if b.lang == "" {
		return "instructions"
	}
	return "executable"
}

// listStatusOK reports whether status is what `skillbox list` may show for b. The list reads
// manifests only and the CLI runs no background check, so a module is unchecked until some
// process checked it, and active after (which ones other tests sharing the cache and its index
// have run varies); a script skill stays unchecked, as nothing checks it ahead of a run; an
// instruction skill has nothing to check.
func listStatusOK(b bundledSkill, status string) bool {
	switch b.lang {
	case "":
		return status == "active"
	case "wasm":
		return status == "active" || status == "unchecked"
	default:
		return status == "unchecked"
	}
}

// listStatusWant says in words what listStatusOK takes.
func listStatusWant(b bundledSkill) string {
	switch b.lang {
	case "":
		return "active"
	case "wasm":
		return "active (or unchecked)"
	default:
		return "unchecked"
	}
}

// bundledCodeFiles map each code file to the language that runs it.
var bundledCodeFiles = map[string]string{"execute.wasm": "wasm", "execute.py": "python", "execute.js": "javascript", "execute.ts": "typescript"}

// bundledSkills lists the bundled skills in the order of their ids: every directory of bundled
// holding a manifest or a SKILL.md. Tests of "every bundled skill" derive what they expect from
// it, so adding a bundled skill breaks none of them, and output that leaves one out or adds one
// still fails them.
func bundledSkills(t testing.TB) []bundledSkill {
	t.Helper()
	skills, err := scanBundled()
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) == 0 {
		t.Fatalf("%s holds no skill", bundled)
	}
	return skills
}

// bundledIDs are the ids of bundledSkills.
func bundledIDs(t testing.TB) []string {
	t.Helper()
	var ids []string
	for _, s := range bundledSkills(t) {
		ids = append(ids, s.id)
	}
	return ids
}

// bundledTools are the tool names of the executable bundled skills, in the order of their ids.
func bundledTools(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, s := range bundledSkills(t) {
		if s.lang != "" {
			names = append(names, s.tool())
		}
	}
	return names
}

// scanBundled reads the bundled directory (see bundledSkills).
func scanBundled() ([]bundledSkill, error) {
	ids, err := testskills.Skills(bundled)
	if err != nil {
		return nil, err
	}
	out := make([]bundledSkill, len(ids))
	for i, id := range ids {
		if out[i], err = readBundled(id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readBundled reads the version and language of bundled skill id, a directory of bundled
// holding a manifest or a SKILL.md.
func readBundled(id string) (bundledSkill, error) {
	dir := filepath.Join(bundled, id)
	s := bundledSkill{id: id}
	for _, name := range testskills.Manifests() {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		var m struct{ Version, Runtime string }
		if err := yaml.Unmarshal(data, &m); err != nil { // JSON is YAML
			return s, fmt.Errorf("%s/%s: %w", dir, name, err)
		}
		if m.Runtime == "" { // no runtime named: the one code file says
			if m.Runtime, err = codeLang(dir); err != nil {
				return s, err
			}
		}
		s.version, s.lang = m.Version, m.Runtime
		break
	}
	return s, nil
}

// codeLang is the language of the one code file in dir, a skill whose manifest names no runtime.
func codeLang(dir string) (string, error) {
	var langs []string
	for file, lang := range bundledCodeFiles {
		if _, err := os.Stat(filepath.Join(dir, file)); err == nil {
			langs = append(langs, lang)
		}
	}
	if len(langs) != 1 {
		return "", fmt.Errorf("%s: its manifest names no runtime and it holds %d code files (%v), want 1", dir, len(langs), langs)
	}
	return langs[0], nil
}

// bundledModules are the ids of the bundled skills that are modules (standard Go, 3-4 MB each),
// which warm compiles; a script skill compiles nothing ahead of a run. An unreadable directory
// leaves it empty: the cases that list the directory then fail on their own.
var bundledModules = func() []string {
	skills, _ := scanBundled()
	var ids []string
	for _, s := range skills {
		if s.lang == "wasm" {
			ids = append(ids, s.id)
		}
	}
	return ids
}()
