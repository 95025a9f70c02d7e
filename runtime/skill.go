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

// Skill is one loaded version of a skill package. It is immutable: a reload makes new Skills, and a
// run keeps the one it started with.
type Skill struct {
	ID     string
	Dir    string
	Kind   Kind
	Status Status
	// Err is why Status is StatusError: a *SkillError listing every problem.
	Err error
	// Manifest is nil for instruction skills and for manifests that could not be parsed.
	Manifest *Manifest
	// InstructionsPath is the SKILL.md file, if there is one.
	InstructionsPath string
	// Instructions is the SKILL.md's frontmatter (metadata only: Body is empty; the body is read
	// on demand), when it parsed. InstructionsErr is why it did not: an instruction skill with
	// a broken SKILL.md is broken; an executable one still runs, and says so.
	Instructions    *skillmd.Doc
	InstructionsErr error
	// Hash is the sha256 of the module, hex.
	Hash     string
	Grant    *Grant
	LoadedAt time.Time

	schema *Schema
	wasm   []byte
}

// Schema returns the compiled JSON Schema of the skill's arguments (nil unless executable).
func (s *Skill) Schema() *Schema { return s.schema }

// Name is the manifest's name, else the SKILL.md's, else the id.
func (s *Skill) Name() string {
	switch {
	case s.Manifest != nil:
		return s.Manifest.Name
	case s.Instructions != nil:
		return s.Instructions.Name
	}
	return s.ID
}

// Description is the manifest's description, else the SKILL.md's.
func (s *Skill) Description() string {
	switch {
	case s.Manifest != nil:
		return s.Manifest.Description
	case s.Instructions != nil:
		return s.Instructions.Description
	}
	return ""
}

// Version is the manifest's version, or "" when there is none.
func (s *Skill) Version() string {
	if s.Manifest == nil {
		return ""
	}
	return s.Manifest.Version
}

// Module file names; the manifest may be JSON or YAML.
const (
	ModuleFile = "execute.wasm"
	// maxModuleBytes bounds what a registry scan reads for one module.
	maxModuleBytes = 128 << 20
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
	id := filepath.Base(dir)
	s = &Skill{ID: id, Dir: dir, Kind: Executable, Status: StatusActive, LoadedAt: time.Now()}
	s.InstructionsPath = findInstructions(dir)
	if s.InstructionsPath != "" {
		s.Instructions, s.InstructionsErr = skillmd.ReadMeta(s.InstructionsPath)
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
		if s.InstructionsPath == "" {
			return nil, false
		}
		s.Kind = Instructions
		if !ValidID(id) {
			s.fail(&ManifestError{Path: dir, Msg: fmt.Sprintf("%q is not a valid skill id", id), Hint: "rename the directory: lower-case letters, digits and '-'"})
		}
		var me *skillmd.Error
		switch {
		case errors.As(s.InstructionsErr, &me):
			for _, p := range me.All() {
				s.fail(&ManifestError{Path: s.InstructionsPath, Field: p.Field, Msg: p.Msg, Hint: p.Hint})
			}
		case s.InstructionsErr != nil:
			s.fail(&ManifestError{Path: s.InstructionsPath, Msg: s.InstructionsErr.Error()})
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
		if _, err := readModule(filepath.Join(dir, ModuleFile)); err != nil {
			s.fail(&ManifestError{Path: filepath.Join(dir, ModuleFile), Msg: err.Error(), Hint: "build it: skillbox build " + dir})
		}
		return s, true
	}
	s.Manifest = m
	if m.ID != id {
		s.fail(&ManifestError{Path: manifestPath, Field: "id", Msg: fmt.Sprintf("%q does not match the directory name %q", m.ID, id), Hint: "rename one so they are equal"})
	}
	s.schema = m.schema
	if s.schema == nil { // the empty schema of a skill without parameters
		s.schema, _ = compileSchema(m.Parameters)
	}

	modPath := filepath.Join(dir, ModuleFile)
	wasm, err := readModule(modPath)
	if err != nil {
		s.fail(&ManifestError{Path: modPath, Msg: err.Error(), Hint: "build it: skillbox build " + dir})
	} else {
		sum := sha256.Sum256(wasm)
		s.wasm, s.Hash = wasm, hex.EncodeToString(sum[:])
	}
	s.Grant = p.Grant(m, dir)
	return s, true
}

func (s *Skill) fail(e *ManifestError) {
	s.Status = StatusError
	se, _ := s.Err.(*SkillError)
	if se == nil {
		se = &SkillError{ID: s.ID}
		s.Err = se
	}
	se.Problems = append(se.Problems, e)
}

func readModule(path string) ([]byte, error) {
	data, err := readRegular(path, maxModuleBytes)
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
