// Package skilltest holds the fixtures the tests of the agent packages share: skill packages
// written to a temporary directory, runtimes over them, and catalogs of skills made in memory.
// One harness, so the packages' tests do not each keep a copy.
package skilltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// cacheDir is the compilation cache the runtime's own tests use, shared between packages.
var cacheDir = testcache.Dir()

// Fixture writes a skill package: files by name, and execute.wasm copied from
// testdata/wasm/echo.wasm when withModule is set.
func Fixture(t testing.TB, dir, id string, files map[string]string, withModule bool) {
	t.Helper()
	sd := filepath.Join(dir, id)
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(sd, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if withModule {
		data, err := os.ReadFile(filepath.Join(moduleRoot(t), "testdata", "wasm", "echo.wasm"))
		if err != nil {
			t.Fatalf("echo.wasm: %v (run make fixtures)", err)
		}
		if err := os.WriteFile(filepath.Join(sd, spec.ModuleFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// NewRuntime is a runtime over the skills of dir under policy p, closed when the test ends.
func NewRuntime(t testing.TB, dir string, p *policy.Policy) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Policy: p, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// Catalog is a catalog of given skills, for tests that need no files.
type Catalog []*runtime.Skill

func (c Catalog) Skills() []*runtime.Skill { return c }

// moduleRoot is the directory of go.mod above the test's working directory: fixtures under
// testdata/ are found from there, whatever package's test asks.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Exe is an active executable skill with only the metadata a search reads.
func Exe(id, name, desc string, tags ...string) *runtime.Skill {
	return MustSkill(runtime.SkillSpec{ID: id, Kind: spec.Executable, Status: catalog.StatusActive,
		Manifest: &spec.Manifest{ID: id, Name: name, Description: desc, Tags: tags}})
}

// MustSkill is runtime.NewSkill that panics on an error: for specs a test writes.
func MustSkill(spec runtime.SkillSpec) *runtime.Skill {
	s, err := runtime.NewSkill(spec)
	if err != nil {
		panic(err)
	}
	return s
}

var benchWords = strings.Fields(`pdf text image audio video web http json csv table chart graph
	report summary translate language email calendar meeting note task todo file folder archive zip
	database query sql search index vector embedding model prompt code review test build deploy
	docker cloud storage bucket upload download weather map route travel flight hotel price stock
	market finance invoice payment crypto wallet security scan audit log metric alert monitor
	slack github issue ticket support customer sales lead contact form survey poll quiz lesson
	course book article news feed blog post tweet social photo resize crop convert compress encode
	decode hash sign verify token secret password user account role permission policy network dns`)

// BenchCatalog is n skills with generated metadata: an id, a two-word name, a description of 12
// to 24 words and two tags, all drawn from benchWords.
func BenchCatalog(n int) Catalog {
	r := rand.New(rand.NewPCG(1, 2))
	w := func() string { return benchWords[r.IntN(len(benchWords))] }
	c := make(Catalog, n)
	for i := range c {
		a, b := w(), w()
		desc := make([]string, 12+r.IntN(13))
		for j := range desc {
			desc[j] = w()
		}
		c[i] = Exe(fmt.Sprintf("%s-%s-%d", a, b, i), a+" "+b, strings.Join(desc, " "), w(), w())
	}
	return c
}

// EchoSkillMD is the SKILL.md of DisclosureRuntime's "echo" skill.
const EchoSkillMD = `---
name: echo
description: Echoes its arguments.
---

# Echo

Say: $ARGUMENTS

See reference/api.md.
`

// GuideSkillMD is the SKILL.md of DisclosureRuntime's "guide" skill.
const GuideSkillMD = `---
name: guide
description: |
  How to write letters.
  Use it for any letter.
tags: [writing, style]
---

# Letters

Start with the date. Templates are in templates/letter.md.
`

// DisclosureRuntime is a runtime over a skill of every kind the toolset treats differently.
func DisclosureRuntime(t *testing.T) (*runtime.Runtime, string) {
	t.Helper()
	dir := t.TempDir()
	// An executable skill with instructions and files of every sort.
	Fixture(t, dir, "echo", map[string]string{
		"skill.json": `{"id":"echo","name":"Echo","description":"Echoes its arguments","tags":["test"],
			"parameters":{"text":{"type":"string","required":true},"top":{"type":"integer","default":5}}}`,
		"SKILL.md": EchoSkillMD,
	}, true)
	files := map[string]string{
		"reference/api.md": "# API\n\nCall it.\n",
		"data.bin":         "\x00\xff\xfe binary",
		".env":             "SECRET=1",
		"src/main.go":      "package main",
	}
	for name, content := range files {
		p := filepath.Join(dir, "echo", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "echo", "outside.md")); err != nil {
		t.Fatal(err)
	}
	// An executable skill without instructions.
	Fixture(t, dir, "plain", map[string]string{
		"skill.json": `{"id":"plain","name":"Plain","description":"Takes a number","parameters":{"n":{"type":"integer","required":true}}}`,
	}, true)
	// An executable skill whose SKILL.md is broken (no description, and no text to stand for
	// one): it still runs.
	Fixture(t, dir, "bad-md", map[string]string{
		"skill.json": `{"id":"bad-md","name":"Bad md","description":"Has a broken SKILL.md"}`,
		"SKILL.md":   "---\nname: bad-md\n---\n",
	}, true)
	// Instructions only, with tags and a template.
	Fixture(t, dir, "guide", map[string]string{"SKILL.md": GuideSkillMD}, false)
	if err := os.MkdirAll(filepath.Join(dir, "guide", "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "guide", "templates", "letter.md"), []byte("Dear $NAME,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Broken, of both kinds.
	Fixture(t, dir, "broken", map[string]string{"skill.json": `{"id":"broken","name":"Broken"}`}, true)
	Fixture(t, dir, "broken-guide", map[string]string{"SKILL.md": "---\ndescription: [unclosed\n---\nBody\n"}, false)
	return NewRuntime(t, dir, nil), dir
}

// Runner is a runner over a Catalog whose runs return their arguments: for tests of routing,
// which need no module.
type Runner struct{ Catalog }

func (f Runner) Skill(id string) (*runtime.Skill, error) {
	for _, s := range f.Catalog {
		if s.ID() == id {
			return s, nil
		}
	}
	return nil, &run.Error{Kind: run.KindNotFound, Skill: id, Message: "no skill with this id"}
}

func (f Runner) Run(_ context.Context, req run.Request) (*run.Result, error) {
	return &run.Result{Skill: req.Skill, Success: true, Result: req.Args}, nil
}

// SameJSON compares got, marshalled, to the literal want, both indented the same way: the field
// names, their order and every value are the wire format.
func SameJSON(t *testing.T, got any, want string) {
	t.Helper()
	g, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if err := json.Indent(&w, []byte(want), "", "  "); err != nil {
		t.Fatalf("bad literal: %v", err)
	}
	if string(g) != w.String() {
		t.Errorf("got\n%s\nwant\n%s", g, w.String())
	}
}
