package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/skillbox-dev/skillbox/skillmd"
)

// Kind says what a skill is for.
type Kind string

const (
	// Executable skills have a manifest and a module, and can be run.
	Executable Kind = "executable"
	// Instructions skills have only a SKILL.md: they are listed and read, never run.
	Instructions Kind = "instructions"
)

// Status is whether a skill loaded.
type Status string

const (
	StatusActive Status = "active"
	StatusError  Status = "error"
)

// Skill is one loaded version of a skill package, seen read-only: a reload makes new Skills, and a
// run keeps the one it started with. Its accessors hand out copies, so no caller can change what
// another caller, or a run, sees.
type Skill struct {
	id     string
	dir    string
	kind   Kind
	status Status
	// err is why status is StatusError: a *SkillError listing every problem.
	err error
	// manifest is nil for instruction skills and for manifests that could not be parsed.
	manifest *Manifest
	// instructionsPath is the SKILL.md file, if there is one; instructions its frontmatter when it
	// parsed (metadata only: the body is read on demand), instructionsErr why it did not.
	instructionsPath string
	instructions     *skillmd.Doc
	instructionsErr  error
	// hash is the sha256 of the module, hex; digest the version's identity (see digest.go).
	hash     string
	digest   string
	grant    *Grant
	loadedAt time.Time

	schema *Schema
	// wasm is the module to compile: the file, or a copy whose tables got a maximum (see
	// checkModule); info is what the check learned of it, and linearLimit what its linear
	// memories may hold together (the memory limit less its tables' share).
	wasm        []byte
	info        *wasmcheck.Info
	linearLimit uint64
}

// ID is the skill's id: its directory's name.
func (s *Skill) ID() string { return s.id }

// Dir is the skill's directory on the host. Faces that answer remote clients show paths relative
// to it, never it.
func (s *Skill) Dir() string { return s.dir }

// Kind says whether the skill runs or only instructs.
func (s *Skill) Kind() Kind { return s.kind }

// Status is StatusActive, or StatusError when the package is broken (see Err).
func (s *Skill) Status() Status { return s.status }

// Err is why a broken skill is broken: a *SkillError listing every problem; nil when active.
func (s *Skill) Err() error { return s.err }

// Manifest returns a copy of the skill's manifest, or nil for an instruction skill or a manifest
// that did not parse.
func (s *Skill) Manifest() *Manifest { return s.manifest.clone() }

// InstructionsPath is the skill's SKILL.md on the host, or "" when it has none.
func (s *Skill) InstructionsPath() string { return s.instructionsPath }

// Instructions returns a copy of the SKILL.md's frontmatter (its Body is empty: the body is read
// on demand), or nil when there is no SKILL.md or it does not parse (see InstructionsErr).
func (s *Skill) Instructions() *skillmd.Doc { return s.instructions.Clone() }

// InstructionsErr is why the SKILL.md did not parse. An instruction skill with a broken SKILL.md
// is broken; an executable one still runs.
func (s *Skill) InstructionsErr() error { return s.instructionsErr }

// Digest is the version's identity: "sha256:<hex>" over the whole skill tree (manifest, module,
// instructions, resources; see digest.go), so a changed permission is a new version. A run pins
// it and reports it. It is "" only when the tree could not be read (the skill is then broken).
func (s *Skill) Digest() string { return s.digest }

// ModuleHash is the sha256 of the skill's module, hex ("" without one).
func (s *Skill) ModuleHash() string { return s.hash }

// Grant returns a copy of what the skill's runs may do under the policy it was loaded with
// (nil when its manifest did not parse). It holds no secret value.
func (s *Skill) Grant() *Grant { return s.grant.clone() }

// LoadedAt is when this version was loaded.
func (s *Skill) LoadedAt() time.Time { return s.loadedAt }

// Schema returns the compiled JSON Schema of the skill's arguments (nil unless executable).
func (s *Skill) Schema() *Schema { return s.schema }

// Name is the manifest's name, else the SKILL.md's, else the id.
func (s *Skill) Name() string {
	switch {
	case s.manifest != nil:
		return s.manifest.Name
	case s.instructions != nil:
		return s.instructions.Name
	}
	return s.id
}

// Description is the manifest's description, else the SKILL.md's.
func (s *Skill) Description() string {
	switch {
	case s.manifest != nil:
		return s.manifest.Description
	case s.instructions != nil:
		return s.instructions.Description
	}
	return ""
}

// Version is the manifest's version, or "" when there is none.
func (s *Skill) Version() string {
	if s.manifest == nil {
		return ""
	}
	return s.manifest.Version
}

// Tags are the manifest's tags (a copy).
func (s *Skill) Tags() []string {
	if s.manifest == nil {
		return nil
	}
	return append([]string(nil), s.manifest.Tags...)
}

// Module file names; the manifest may be JSON or YAML.
const (
	ModuleFile = "execute.wasm"
	// maxManifestBytes bounds a manifest.
	maxManifestBytes = 1 << 20
)

var manifestNames = []string{"skill.json", "skill.yaml", "skill.yml"}

// wasmMagic starts every WebAssembly binary module (version 1).
var wasmMagic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// LoadSkill loads the skill package in dir under policy p. It never fails: a broken package comes
// back with Status error and Err saying everything that is wrong. ok is false when dir is not a
// skill package at all (no manifest, no SKILL.md), which a scan skips silently.
func LoadSkill(dir string, p *Policy) (s *Skill, ok bool) {
	return loadSkill(dir, p, nil)
}

// loadSkill is LoadSkill remembering file digests in d (nil: none).
func loadSkill(dir string, p *Policy, d *digester) (s *Skill, ok bool) {
	defer func() {
		if s == nil {
			return
		}
		digest, err := d.treeDigest(dir)
		if err != nil {
			s.fail(&ManifestError{Path: dir, Msg: fmt.Sprintf("cannot compute the version digest: %v", err)})
			return
		}
		s.digest = digest
	}()
	id := filepath.Base(dir)
	s = &Skill{id: id, dir: dir, kind: Executable, status: StatusActive, loadedAt: time.Now()}
	s.instructionsPath = findInstructions(dir)
	if s.instructionsPath != "" {
		s.instructions, s.instructionsErr = skillmd.ReadMeta(s.instructionsPath)
	}

	manifestPath := ""
	for _, n := range manifestNames {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
			if manifestPath != "" {
				s.fail(&ManifestError{Path: filepath.Join(dir, n), Msg: "a second manifest", Hint: "keep one of " + strings.Join(manifestNames, ", ")})
				continue
			}
			manifestPath = filepath.Join(dir, n)
		}
	}
	if manifestPath == "" {
		if s.instructionsPath == "" {
			return nil, false
		}
		s.kind = Instructions
		if !ValidID(id) {
			s.fail(&ManifestError{Path: dir, Msg: fmt.Sprintf("%q is not a valid skill id", id), Hint: "rename the directory: lower-case letters, digits and '-'"})
		}
		var me *skillmd.Error
		switch {
		case errors.As(s.instructionsErr, &me):
			for _, p := range me.All() {
				s.fail(&ManifestError{Path: s.instructionsPath, Field: p.Field, Msg: p.Msg, Hint: p.Hint})
			}
		case s.instructionsErr != nil:
			s.fail(&ManifestError{Path: s.instructionsPath, Msg: s.instructionsErr.Error()})
		}
		return s, true
	}

	data, err := readRegular(manifestPath, maxManifestBytes)
	if err != nil {
		s.fail(&ManifestError{Path: manifestPath, Msg: err.Error()})
		return s, true
	}
	m, err := ParseManifest(manifestPath, data)
	var se *SkillError
	if errors.As(err, &se) {
		for _, p := range se.Problems {
			s.fail(p)
		}
		// Still check the module, so one pass reports everything.
		modPath := filepath.Join(dir, ModuleFile)
		if wasm, err := readModule(modPath, p.Modules); err != nil {
			s.fail(&ManifestError{Path: modPath, Msg: err.Error(), Hint: "build it: skillbox build " + dir})
		} else {
			s.wasm = wasm
			s.checkModule(modPath, p.Modules)
		}
		return s, true
	}
	s.manifest = m
	if m.ID != id {
		s.fail(&ManifestError{Path: manifestPath, Field: "id", Msg: fmt.Sprintf("%q does not match the directory name %q", m.ID, id), Hint: "rename one so they are equal"})
	}
	s.schema = m.schema
	if s.schema == nil { // the empty schema of a skill without parameters
		s.schema, _ = compileSchema(m.Parameters)
	}

	s.grant = p.Grant(m, dir)
	modPath := filepath.Join(dir, ModuleFile)
	wasm, err := readModule(modPath, p.Modules)
	if err != nil {
		s.fail(&ManifestError{Path: modPath, Msg: err.Error(), Hint: "build it: skillbox build " + dir})
	} else {
		sum := sha256.Sum256(wasm)
		s.wasm, s.hash = wasm, hex.EncodeToString(sum[:])
		s.checkModule(modPath, p.Modules)
	}
	return s, true
}

func (s *Skill) fail(e *ManifestError) {
	s.status = StatusError
	se, _ := s.err.(*SkillError)
	if se == nil {
		se = &SkillError{ID: s.id}
		s.err = se
	}
	se.Problems = append(se.Problems, e)
}

func readModule(path string, ml ModuleLimits) ([]byte, error) {
	data, err := readRegular(path, ml.withDefaults().MaxModuleBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("missing: an executable skill needs its compiled module")
	}
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, wasmMagic) {
		return nil, errors.New("not a WebAssembly module (bad magic number or version)")
	}
	return data, nil
}

// readRegular reads a regular file of at most max bytes. A skill package is untrusted: its
// module may be a symlink to /dev/zero or a FIFO, which a plain ReadFile would read forever or
// wait on; safefile refuses those, and the limited read stops a file that grows meanwhile.
func readRegular(path string, max int64) ([]byte, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, fmt.Errorf("%d bytes is more than the %d allowed", st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("more than the %d bytes allowed", max)
	}
	return data, nil
}

// findInstructions returns the path of dir's SKILL.md, matched case-insensitively.
func findInstructions(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if strings.EqualFold(e.Name(), "SKILL.md") && e.Type().IsRegular() {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}
