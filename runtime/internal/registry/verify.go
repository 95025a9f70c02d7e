package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/internal/jsbundle"
	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// verdict is what checking a skill found: its module's hash, size and bounds, its version digest,
// and its status with every problem, the load's and the check's. A Skill gets one, once.
type Verdict struct {
	Status catalog.Status
	Err    error // a *SkillError, nil when active
	Hash   string
	Digest string
	// size is the module's size in bytes; info what its bounds check learned, linearLimit what
	// its linear memories may hold (see CheckModule). info is nil when the module did
	// not pass.
	Size        int64
	Info        *wasmcheck.Info
	LinearLimit uint64
	// Changed says the check found the skill changed on disk since it was loaded (its manifest
	// is another): a rescan loads what is there now.
	Changed bool
	// code is a script skill's code as it was checked, when it is at most maxKeptScript: its
	// runs evaluate it, not the file, which may have changed since (a skill rewritten while it
	// serves keeps serving the version loaded until the next reload switches).
	code string
}

// maxKeptScript bounds the script code a verdict keeps in memory; a larger script is read
// again for each run, and checked to be the same.
const maxKeptScript = 1 << 20

// unverified is what an unchecked skill's internals read as: no module, no digest.
var Unverified = &Verdict{Status: catalog.StatusUnchecked}

// checks is what the skills of one Runtime share for their checks: the digester that remembers
// file digests and module checks, and counts and a hook for the runtime.
type Checks struct {
	Digests *Digester
	// bundles remembers the bundles of JavaScript and TypeScript skills (nil: none).
	Bundles *jsbundle.Cache
	// made counts checks made; reads counts modules read from disk by them (the rest were known
	// by their hash).
	Made, Reads atomic.Int64
	// onCheck is called after each check of a skill, outside any lock (nil: nothing).
	OnCheck func(*Skill, *Verdict)
}

func (c *Checks) digester() *Digester {
	if c == nil {
		return nil
	}
	return c.Digests
}

// state returns what s's check found, or unverified before it.
func (s *Skill) State() *Verdict {
	if v := s.checked.Load(); v != nil {
		return v
	}
	return Unverified
}

// verified returns what s's check found, checking it first if no one has.
func (s *Skill) Verified() *Verdict {
	v, _ := s.Check(context.Background())
	return v
}

// check checks s once (see Skill): concurrent callers wait for the one that checks, and every
// later call returns what it found. The error is ctx's, when it ended before the check began
// (the check itself is bounded: a module of at most modules.maxModuleBytes, a tree of at most
// maxDigestBytes); v is then unverified.
func (s *Skill) Check(ctx context.Context) (*Verdict, error) {
	if v := s.checked.Load(); v != nil {
		return v, nil
	}
	s.checkMu.Lock()
	if v := s.checked.Load(); v != nil {
		s.checkMu.Unlock()
		return v, nil
	}
	if err := ctx.Err(); err != nil {
		s.checkMu.Unlock()
		return Unverified, err
	}
	v, _ := s.verify(false)
	s.checked.Store(v)
	if v.Status == catalog.StatusActive {
		s.lastGood.prev.Store(nil) // sound itself: the version before it is no longer needed
	}
	s.checkMu.Unlock()
	if s.cache != nil {
		s.cache.Made.Add(1)
		if s.cache.OnCheck != nil {
			s.cache.OnCheck(s, v)
		}
	}
	return v, nil
}

// adopt gives s the verdict that what is remembered proves current — every file of its tree has
// the identity it had when it was hashed, and its module's bounds check is known by its hash —
// reading no file. It reports whether it could; a scan calls it, before anyone else sees s.
func (s *Skill) Adopt() bool {
	defer func() { s.listing, s.manifestStat = nil, nil }() // the load's findings serve this once
	if s.cache == nil {
		return false
	}
	v, ok := s.verify(true)
	if ok {
		s.checked.Store(v)
	}
	return ok
}

// memMiB is the memory limit the module is bounded under: the grant's, or the default when the
// manifest did not parse.
func (s *Skill) memMiB() int64 {
	if s.grant != nil {
		return s.grant.Limits.MemoryMiB
	}
	return spec.DefaultLimits.MemoryMiB
}

// verify computes s's verdict: the digest of its tree, and for an executable skill the hash and
// bounds of its module. cachedOnly reads no file (see adopt), and ok is false when that is not
// enough.
func (s *Skill) verify(cachedOnly bool) (v *Verdict, ok bool) {
	// Twice at most: a module replaced between the walk and its read is walked again, so that the
	// digest covers the module that was checked.
	for range 2 {
		v = &Verdict{}
		var problems []*spec.ManifestError
		var t bundle.Tree
		var err error
		flat := false
		if cachedOnly {
			t, flat, err = s.cache.digester().CachedFlat(s.dir, s.listing, map[string]fs.FileInfo{s.manifestFile: s.manifestStat})
		}
		if !flat {
			t, err = s.cache.digester().Walk(s.dir, cachedOnly)
		}
		switch {
		case errors.Is(err, bundle.ErrNotCached):
			return nil, false
		case err != nil:
			problems = append(problems, &spec.ManifestError{Path: s.dir, Msg: fmt.Sprintf("cannot compute the version digest: %v", err)})
		case s.manifestFile != "" && t.Top[s.manifestFile] != s.manifestSum:
			// The manifest this version holds is not the one on disk any more: a digest, or a
			// module, read now would be another version's.
			v.Changed = true
			return s.conclude(v, []*spec.ManifestError{{Path: filepath.Join(s.dir, s.manifestFile), Msg: "changed since this version was loaded",
				Hint: "reload the skills (serve --watch and mcp --watch do it on change)"}}), true
		default:
			v.Digest = t.Digest
		}
		if s.kind == spec.Executable && s.lang.Script() {
			p, ok := s.verifyScript(v, cachedOnly)
			if !ok {
				return nil, false
			}
			if p != nil {
				problems = append([]*spec.ManifestError{p}, problems...)
			}
		} else if s.kind == spec.Executable {
			p, ok := s.verifyModule(v, t.Module, cachedOnly)
			if !ok {
				return nil, false
			}
			if t.Module != "" && v.Hash != "" && v.Hash != t.Module {
				continue
			}
			if p != nil {
				problems = append([]*spec.ManifestError{p}, problems...) // as the load listed them: the module's before the digest's
			}
		}
		return s.conclude(v, problems), true
	}
	return s.conclude(v, []*spec.ManifestError{{Path: filepath.Join(s.dir, spec.ModuleFile), Msg: "changed while it was being checked", Hint: "check it again once it is written"}}), true
}

// conclude sets v's status and error from the load's problems and the check's.
func (s *Skill) conclude(v *Verdict, problems []*spec.ManifestError) *Verdict {
	if s.problems == nil && len(problems) == 0 {
		v.Status = catalog.StatusActive
		return v
	}
	se := &spec.SkillError{ID: s.id}
	if s.problems != nil {
		se.Problems = append(se.Problems, s.problems.Problems...)
	}
	se.Problems = append(se.Problems, problems...)
	v.Status, v.Err = catalog.StatusError, se
	return v
}

// addProblem adds a problem found after the check (CheckSkill's compilation) to s's verdict. It
// is for a Skill no one else holds yet.
func (s *Skill) AddProblem(e *spec.ManifestError) {
	v := *s.Verified()
	se := &spec.SkillError{ID: s.id}
	if old, ok := v.Err.(*spec.SkillError); ok {
		se.Problems = append(se.Problems, old.Problems...)
	}
	se.Problems = append(se.Problems, e)
	v.Status, v.Err = catalog.StatusError, se
	s.checked.Store(&v)
}

// verifyModule fills v's hash, size and bounds, and returns the module's problem. sum is the
// module's hash as the digest walk found it ("" if it found none): when the check of that hash is
// remembered, the module is not read.
func (s *Skill) verifyModule(v *Verdict, sum string, cachedOnly bool) (*spec.ManifestError, bool) {
	path := filepath.Join(s.dir, spec.ModuleFile)
	d := s.cache.digester()
	key := ModuleKey{Hash: sum, Limits: s.modules, MemMiB: s.memMiB()}
	if sum != "" {
		if mc := d.Module(key); mc != nil {
			v.Hash, v.Size, v.Info, v.LinearLimit = sum, mc.Size, mc.Info, mc.LinearLimit
			return mc.At(path, s.dir), true
		}
	}
	if cachedOnly {
		// A module that is not there is known without reading one.
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			return moduleReadProblem(path, s.dir, errNoModule), true
		}
		return nil, false
	}
	if s.cache != nil {
		s.cache.Reads.Add(1)
	}
	wasm, err := safefile.ReadFile(path, s.modules.WithDefaults().MaxModuleBytes)
	if err != nil {
		return moduleReadProblem(path, s.dir, err), true
	}
	h := sha256.Sum256(wasm)
	key.Hash = hex.EncodeToString(h[:])
	var mc *ModuleCheck
	if !bytes.HasPrefix(wasm, wasmMagic) {
		// Remembered like a bounds check, so that a rescan finds this skill broken at once
		// instead of offering it until it is checked again.
		mc = &ModuleCheck{Size: int64(len(wasm)), Problem: &spec.ManifestError{Msg: errNotWasm.Error()}, Build: true}
	} else {
		mc, _ = CheckModule(wasm, s.modules, key.MemMiB)
	}
	d.RememberModule(key, mc)
	v.Hash, v.Size, v.Info, v.LinearLimit = key.Hash, mc.Size, mc.Info, mc.LinearLimit
	return mc.At(path, s.dir), true
}

// moduleReadProblem is the problem of a module that could not be read.
func moduleReadProblem(path, dir string, err error) *spec.ManifestError {
	if errors.Is(err, fs.ErrNotExist) {
		err = errNoModule
	}
	return &spec.ManifestError{Path: path, Msg: err.Error(), Hint: "build it: skillbox build " + dir}
}

// module returns the bytes of s's module to compile: read again, checked to be the version s
// pinned (the same sha256), and bounded again — so what compiles is always what was checked, and
// the registry keeps no module in memory. The caller drops them once compiled.
//
// # Errors
//
// ErrModuleChanged when the file is no longer the module this version was loaded with; the
// module's problem (a *ManifestError) when it cannot be read or crosses a bound now.
func (s *Skill) Module() ([]byte, error) {
	v := s.State()
	if v.Info == nil {
		return nil, fmt.Errorf("skill %q: the module was not checked", s.id)
	}
	path := filepath.Join(s.dir, spec.ModuleFile)
	wasm, err := readModule(path, s.modules)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", run.ErrModuleChanged, path, err)
	}
	h := sha256.Sum256(wasm)
	if got := hex.EncodeToString(h[:]); got != v.Hash {
		return nil, fmt.Errorf("%w: %s has sha256 %.12s now, this version was loaded with %.12s; reload the skills and run it again", run.ErrModuleChanged, path, got, v.Hash)
	}
	mc, module := CheckModule(wasm, s.modules, s.memMiB())
	if mc.Problem != nil {
		return nil, mc.At(path, s.dir)
	}
	return module, nil
}
