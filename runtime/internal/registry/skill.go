package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// Skill is one loaded version of a skill package. Once its load returns it is never changed but
// by its one check: a reload makes new Skills, and a run keeps the one it started with. Its
// accessors return what it holds, not copies; runtime.Skill, the same value as callers see it,
// hands out copies.
//
// A Skill is loaded in two steps. The scan reads what describes it (manifest, SKILL.md
// frontmatter); its module and the digest of its files are read, hashed and checked once, when
// it is first run, checked, or asked for its module hash or digest, or by the runtime's
// background check after a scan (see verify.go). Until then an executable skill is
// StatusUnchecked; after, the accessors report what the check found, and never change again.
type Skill struct {
	// lastGood is the sound version this one replaced (see LinkLastGood).
	lastGood lastGood
	id       string
	dir      string
	kind     spec.Kind
	// lang is what runs an executable skill (see pickLanguage); "" for an instruction skill.
	lang spec.Language
	// problems are what the scan found wrong (nil: nothing): a *SkillError listing each.
	problems *spec.SkillError
	// warnings are what the scan repaired, or found against the Agent Skills format, in a skill
	// that loads regardless (see Warnings).
	warnings []*spec.ManifestError
	// manifest is nil for instruction skills and for manifests that could not be parsed.
	manifest *spec.Manifest
	// instructionsPath is the SKILL.md file, if there is one; instructions its frontmatter when it
	// parsed (metadata only: the body is read on demand), instructionsErr why it did not.
	instructionsPath string
	instructions     *skillmd.Doc
	instructionsErr  error
	grant            *policy.Grant
	// programGrant is what the skill's programs may do, programsErr why they cannot run (see
	// program.go).
	programGrant *policy.Grant
	programsErr  error
	// scriptsDir is whether the load found a scripts/ directory, whose skillbox.json the
	// programs' grant was read with.
	scriptsDir bool
	// agent is set for a skill an agent wrote (its directory holds AuthorMarker): it is granted
	// under the policy's AgentSkills ceiling.
	agent    bool
	loadedAt time.Time
	schema   *spec.Schema
	// manifestFile is the manifest's name in dir ("" without one), manifestSum the sha256 of what
	// the load read of it: the check makes sure the digest it computes is of that manifest.
	manifestFile, manifestSum string
	// listing is the directory's entries as the load found them, sorted by name, and
	// manifestStat the manifest's identity as it was read: adopt uses them, then drops them.
	listing      []fs.DirEntry
	manifestStat fs.FileInfo
	// modules are the policy's module limits the skill was loaded under: its check applies them.
	modules policy.ModuleLimits
	// cache remembers file digests and module checks across reloads (nil: none), and is told of
	// every check.
	cache *Checks

	// checkMu makes the check happen once; checked holds what it found (nil until then).
	checkMu sync.Mutex
	checked atomic.Pointer[Verdict]
}

// ID backs runtime.Skill.ID, which documents it.
func (s *Skill) ID() string { return s.id }

// Dir backs runtime.Skill.Dir, which documents it.
func (s *Skill) Dir() string { return s.dir }

// Kind backs runtime.Skill.Kind, which documents it.
func (s *Skill) Kind() spec.Kind { return s.kind }

// Language backs runtime.Skill.Language, which documents it.
func (s *Skill) Language() spec.Language {
	if s.kind == spec.Executable && s.lang == "" {
		return spec.LangWasm
	}
	return s.lang
}

// Status backs runtime.Skill.Status, which documents it.
func (s *Skill) Status() catalog.Status {
	if v := s.checked.Load(); v != nil {
		return v.Status
	}
	switch {
	case s.problems != nil:
		return catalog.StatusError
	case s.kind == spec.Instructions:
		return catalog.StatusActive // nothing to run; its digest is computed when asked for
	}
	return catalog.StatusUnchecked
}

// Err backs runtime.Skill.Err, which documents it.
func (s *Skill) Err() error {
	if v := s.checked.Load(); v != nil {
		return v.Err
	}
	if s.problems != nil {
		return s.problems
	}
	return nil
}

// Manifest is the skill's own, not a copy: runtime.Skill.Manifest hands out copies.
func (s *Skill) Manifest() *spec.Manifest { return s.manifest }

// InstructionsPath backs runtime.Skill.InstructionsPath, which documents it.
func (s *Skill) InstructionsPath() string { return s.instructionsPath }

// Instructions is the skill's own, not a copy: runtime.Skill.Instructions hands out copies.
func (s *Skill) Instructions() *skillmd.Doc { return s.instructions }

// InstructionsErr backs runtime.Skill.InstructionsErr, which documents it.
func (s *Skill) InstructionsErr() error { return s.instructionsErr }

// Digest backs runtime.Skill.Digest, which documents it.
func (s *Skill) Digest() string { return s.Verified().Digest }

// ModuleHash backs runtime.Skill.ModuleHash, which documents it.
func (s *Skill) ModuleHash() string { return s.Verified().Hash }

// Grant is the skill's own, not a copy: runtime.Skill.Grant hands out copies.
func (s *Skill) Grant() *policy.Grant { return s.grant }

// LoadedAt backs runtime.Skill.LoadedAt, which documents it.
func (s *Skill) LoadedAt() time.Time { return s.loadedAt }

// Schema backs runtime.Skill.Schema, which documents it.
func (s *Skill) Schema() *spec.Schema { return s.schema }

// Name backs runtime.Skill.Name, which documents it.
func (s *Skill) Name() string {
	switch {
	case s.manifest != nil:
		return s.manifest.Name
	case s.instructions != nil:
		return s.instructions.Name
	case s.dir != "":
		return filepath.Base(s.dir)
	}
	return s.id
}

// Warnings backs runtime.Skill.Warnings, which documents it.
func (s *Skill) Warnings() []string {
	if len(s.warnings) == 0 {
		return nil
	}
	rel := RelativeProblems(&spec.SkillError{ID: s.id, Problems: s.warnings}, s.dir, s.dirName())
	out := make([]string, len(rel.Problems))
	for i, p := range rel.Problems {
		out[i] = p.Error()
	}
	return out
}

// ModelInvocable backs runtime.Skill.ModelInvocable, which documents it.
func (s *Skill) ModelInvocable() bool {
	return s.instructions == nil || !s.instructions.DisableModelInvocation
}

// ArgumentHint backs runtime.Skill.ArgumentHint, which documents it.
func (s *Skill) ArgumentHint() string {
	if s.instructions == nil {
		return ""
	}
	return s.instructions.ArgumentHint
}

// AllowedTools backs runtime.Skill.AllowedTools, which documents it.
func (s *Skill) AllowedTools() []string {
	if s.instructions == nil {
		return nil
	}
	return slices.Clone(s.instructions.AllowedTools)
}

// Description backs runtime.Skill.Description, which documents it.
func (s *Skill) Description() string {
	switch {
	case s.manifest != nil:
		return s.manifest.Description
	case s.instructions != nil:
		return s.instructions.Description
	}
	return ""
}

// Version backs runtime.Skill.Version, which documents it.
func (s *Skill) Version() string {
	if s.manifest == nil {
		return ""
	}
	return s.manifest.Version
}

// Tags backs runtime.Skill.Tags, which documents it.
func (s *Skill) Tags() []string {
	if s.manifest == nil {
		return nil
	}
	return append([]string(nil), s.manifest.Tags...)
}

// wasmMagic starts every WebAssembly binary module (version 1).
var wasmMagic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// LoadChecked loads the skill package in dir under p and checks it (see runtime.LoadSkill).
func LoadChecked(dir string, p *policy.Policy) (s *Skill, ok bool) {
	s, ok = Load(dir, p, nil)
	if ok {
		s.Verified()
	}
	return s, ok
}

// loadSkill reads what describes the skill package in dir — its manifest and the frontmatter of
// its SKILL.md — and nothing else: its module and digest are left for its check (see verify.go),
// which remembers what it hashes in c (nil: nowhere).
func Load(dir string, p *policy.Policy, c *Checks) (s *Skill, ok bool) {
	id := filepath.Base(dir)
	s = &Skill{id: id, dir: dir, kind: spec.Executable, loadedAt: time.Now(), modules: p.Modules, cache: c}
	// One listing of the directory finds the SKILL.md and the manifest, and lets the check's
	// adopt stat the files without listing it again: at ten thousand skills, each system call
	// a load saves is seconds of a minute's scans.
	s.listing, _ = os.ReadDir(dir)
	s.instructionsPath = s.findInstructions()
	if s.instructionsPath != "" {
		s.readInstructions()
	}

	manifestPath := ""
	for _, n := range spec.ManifestFiles() {
		if isRegular(dir, s.listing, n) {
			if manifestPath != "" {
				s.fail(&spec.ManifestError{Path: filepath.Join(dir, n), Msg: "a second manifest", Hint: "keep one of " + strings.Join(spec.ManifestFiles(), ", ")})
				continue
			}
			manifestPath = filepath.Join(dir, n)
		}
	}
	if manifestPath == "" {
		if s.instructionsPath == "" {
			return nil, false
		}
		s.kind = spec.Instructions
		s.deriveID()
		var me *skillmd.Error
		switch {
		case errors.As(s.instructionsErr, &me):
			for _, p := range me.All() {
				s.fail(&spec.ManifestError{Path: s.instructionsPath, Field: p.Field, Msg: p.Msg, Hint: p.Hint})
			}
		case s.instructionsErr != nil:
			s.fail(&spec.ManifestError{Path: s.instructionsPath, Msg: s.instructionsErr.Error()})
		}
		if s.scriptsDir = hasDir(s.listing, spec.ScriptsDir); s.scriptsDir {
			if s.agent = isRegularEntry(s.listing, AuthorMarker); s.agent {
				p = p.ForAgentSkills()
			}
		}
		s.loadPrograms(p)
		return s, true
	}

	data, st, err := safefile.ReadFileStat(manifestPath, spec.MaxManifestBytes)
	if err != nil {
		s.fail(&spec.ManifestError{Path: manifestPath, Msg: err.Error()})
		return s, true
	}
	if isRegularEntry(s.listing, filepath.Base(manifestPath)) {
		s.manifestStat = st
	}
	sum := sha256.Sum256(data)
	s.manifestFile, s.manifestSum = filepath.Base(manifestPath), hex.EncodeToString(sum[:])
	m, err := spec.ParseManifest(manifestPath, data)
	var se *spec.SkillError
	if errors.As(err, &se) {
		// The check still bounds the module (or reads the script the directory holds), so
		// that one pass reports everything.
		for _, p := range se.Problems {
			s.fail(p)
		}
		s.pickLanguage(&spec.Manifest{}, manifestPath)
		return s, true
	}
	s.manifest = m
	s.warnPlaceholders(manifestPath, m)
	s.pickLanguage(m, manifestPath)
	if s.agent = isRegularEntry(s.listing, AuthorMarker); s.agent {
		p = p.ForAgentSkills() // its grant, and its programs', never pass the agents' ceiling
	}
	if m.ID != id {
		s.fail(&spec.ManifestError{Path: manifestPath, Field: "id", Msg: fmt.Sprintf("%q does not match the directory name %q", m.ID, id), Hint: "rename one so they are equal"})
	}
	s.schema = m.Schema()
	if s.schema == nil { // the empty schema of a skill without parameters
		s.schema, _ = spec.CompileSchema(m.Parameters)
	}
	s.grant = p.Grant(m, dir)
	s.scriptsDir = hasDir(s.listing, spec.ScriptsDir)
	s.loadPrograms(p)
	return s, true
}

// dropListing forgets what the load found of s's directory (see adopt): a check that must read
// the files, not trust their identity, calls it before anyone else sees s.
func (s *Skill) DropListing() { s.listing, s.manifestStat = nil, nil }

// unchecked reports whether no check of s has concluded yet.
func (s *Skill) Unchecked() bool { return s.checked.Load() == nil }

// Lang is what runs an executable skill as its load decided it: "" until then (see Language).
func (s *Skill) Lang() spec.Language { return s.lang }

// LoadProblems are what the load found wrong (nil: nothing), without the check's.
func (s *Skill) LoadProblems() *spec.SkillError { return s.problems }

// described is a skill as a caller describes it, with no package on disk (see NewSkill): it has
// no module, and m and ins are copied.
func Described(id, dir string, kind spec.Kind, m *spec.Manifest, ins *skillmd.Doc, status catalog.Status, err error) (*Skill, error) {
	s := &Skill{id: id, dir: dir, kind: kind, manifest: m.Clone(), instructions: ins.Clone(), loadedAt: time.Now()}
	if status != catalog.StatusUnchecked {
		s.checked.Store(&Verdict{Status: status, Err: err})
	}
	if s.manifest != nil {
		params := s.manifest.Parameters
		if len(params) == 0 {
			params = []byte(`{"type":"object","properties":{},"additionalProperties":false}`)
		}
		schema, err := spec.CompileSchema(params)
		if err != nil {
			return nil, err
		}
		s.schema = schema
	}
	return s, nil
}

// hasDir reports whether entries (sorted by name) list name as a directory, not a symlink.
func hasDir(entries []fs.DirEntry, name string) bool {
	i, found := slices.BinarySearchFunc(entries, name, func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
	return found && entries[i].IsDir()
}

// warn records what the load repaired or found against the format. Only the load calls it,
// before anyone else sees s.
func (s *Skill) warn(e *spec.ManifestError) { s.warnings = append(s.warnings, e) }

// AddWarning records a warning a check of s's code found (runtime's check of what it reads),
// as the load records its own: call it only before s is shared, as CheckSkills and an install's
// check do.
func (s *Skill) AddWarning(e *spec.ManifestError) { s.warn(e) }

// fail records a problem the load found. Only the load calls it, before anyone else sees s.
func (s *Skill) fail(e *spec.ManifestError) {
	if s.problems == nil {
		s.problems = &spec.SkillError{ID: s.id}
	}
	s.problems.Problems = append(s.problems.Problems, e)
}

// errNoModule is an executable skill without its module; errNotWasm one whose module is not
// WebAssembly.
var (
	errNoModule = errors.New("missing: an executable skill needs its compiled module")
	errNotWasm  = errors.New("not a WebAssembly module (bad magic number or version)")
)

func readModule(path string, ml policy.ModuleLimits) ([]byte, error) {
	data, err := safefile.ReadFile(path, ml.WithDefaults().MaxModuleBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoModule
	}
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, wasmMagic) {
		return nil, errNotWasm
	}
	return data, nil
}

// isRegularEntry reports whether entries (sorted by name) list name as a regular file, not a
// symlink: only then is the identity of the file read through its name the entry's own.
func isRegularEntry(entries []fs.DirEntry, name string) bool {
	i, found := slices.BinarySearchFunc(entries, name, func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
	return found && entries[i].Type().IsRegular()
}

// isRegular reports whether name, in dir whose listing is entries, is a regular file, following a
// symlink.
func isRegular(dir string, entries []fs.DirEntry, name string) bool {
	i, found := slices.BinarySearchFunc(entries, name, func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
	if !found {
		return false
	}
	switch t := entries[i].Type(); {
	case t.IsRegular():
		return true
	case t&fs.ModeSymlink != 0:
		st, err := os.Stat(filepath.Join(dir, name))
		return err == nil && st.Mode().IsRegular()
	}
	return false
}

// findInstructions returns the path of the skill's SKILL.md, matched case-insensitively, from its
// listing: SKILL.md itself when it is there, else the first by name. It warns when the name is
// not SKILL.md, and when there are several.
func (s *Skill) findInstructions() string {
	var found []string
	for _, e := range s.listing {
		if strings.EqualFold(e.Name(), spec.InstructionsFile) && e.Type().IsRegular() {
			found = append(found, e.Name())
		}
	}
	if len(found) == 0 {
		return ""
	}
	name := found[0]
	if slices.Contains(found, spec.InstructionsFile) {
		name = spec.InstructionsFile
	}
	path := filepath.Join(s.dir, name)
	if len(found) > 1 {
		s.warn(&spec.ManifestError{Path: s.dir, Msg: fmt.Sprintf("holds %s: %s is read", strings.Join(found, " and "), name), Hint: "keep one SKILL.md"})
	}
	if name != spec.InstructionsFile {
		s.warn(&spec.ManifestError{Path: path, Msg: fmt.Sprintf("is named %s; it breaks the %s", name, skillmd.RuleFileName), Hint: "rename it to SKILL.md"})
	}
	return path
}

// readInstructions reads the SKILL.md's frontmatter, and keeps as warnings what the reader
// repaired and how its values break the format's rules. A SKILL.md without a name is named after
// the directory, as Claude Code names it.
func (s *Skill) readInstructions() {
	d, err := skillmd.ReadMeta(s.instructionsPath)
	s.instructions, s.instructionsErr = d, err
	if d == nil {
		return
	}
	for _, w := range append(d.Warnings, skillmd.Check(s.instructionsPath, d)...) {
		s.warn(&spec.ManifestError{Path: s.instructionsPath, Field: w.Field, Msg: w.Msg, Hint: w.Hint})
	}
	d.Warnings = nil // kept as the skill's, above
	if spec.IsPlaceholder(d.Description) {
		s.warn(&spec.ManifestError{Path: s.instructionsPath, Field: "description", Msg: "is the placeholder skillbox new wrote", Hint: spec.PlaceholderHint})
	}
	base := filepath.Base(s.dir)
	switch {
	case d.Name == "":
		d.Name = base
	case d.Name != base && skillmd.ValidName(d.Name):
		s.warn(&spec.ManifestError{Path: s.instructionsPath, Field: "name", Msg: fmt.Sprintf("%q is not the directory's name %q; it breaks the %s", d.Name, base, skillmd.RuleNameDirectory),
			Hint: "rename one so they are equal"})
	}
}

// deriveID gives an instruction skill whose directory's name is not a valid id the id
// [skillmd.Slug] makes of it ("My_Skill" is "my-skill"), with a warning; a name that makes no id
// ("日本語", "___") is a problem. Two directories of one skills directory that make the same id
// are settled by the scan (see resolveIDs).
func (s *Skill) deriveID() {
	base := filepath.Base(s.dir)
	if spec.ValidID(base) {
		return
	}
	id := DerivedID(base)
	if id == "" {
		s.fail(&spec.ManifestError{Path: s.dir, Msg: fmt.Sprintf("%q is not a valid skill id, and none can be made of it", base),
			Hint: "rename the directory: lower-case letters, digits and '-'"})
		return
	}
	s.id = id
	s.warn(&spec.ManifestError{Path: s.dir, Msg: fmt.Sprintf("the directory's name %q is not a valid skill id, so the skill's id is %q (%s)", base, id, skillmd.RuleName),
		Hint: fmt.Sprintf("rename the directory to %q", id)})
}

// derivedID is the id of an instruction skill whose directory is named name, not an id: what
// [skillmd.Slug] makes of it, or "" when that is no id either.
func DerivedID(name string) string {
	if id := skillmd.Slug(name, spec.MaxIDLen); spec.ValidID(id) {
		return id
	}
	return ""
}

// derived reports whether s's id was derived from its directory's name (see deriveID).
func (s *Skill) derived() bool { return s.dir != "" && s.id != filepath.Base(s.dir) }

// AuthorMarker marks a skill an agent wrote. Packages may not carry hidden files, so only the
// runtime writes it.
const AuthorMarker = ".skillbox-author.json"

// AgentWritten backs runtime.Skill.AgentWritten, which documents it.
func (s *Skill) AgentWritten() bool { return s.agent }
