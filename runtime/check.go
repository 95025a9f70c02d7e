package runtime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/tetratelabs/wazero"
)

// knownImportModules are the only import namespaces a skill module may use (docs/abi.md §1).
var knownImportModules = map[string]bool{
	"extism:host/env":        true,
	"extism:host/user":       true,
	"wasi_snapshot_preview1": true,
}

// CheckSkill loads the package in dir and, when its manifest is sound, compiles its module and
// checks that it exports the entrypoint and imports only what the host provides. Every problem
// found is in the returned skill's Err (a *SkillError); ok is false when dir is not a skill.
// A module that passes still may fail at run time, but not for want of a symbol.
//
// A compilation is admitted like a run (see Admission); when the runtime has no room for it, or
// is closed, that is a problem of this check too ("cannot be compiled now"), not of the package.
func (rt *Runtime) CheckSkill(ctx context.Context, dir string) (s *Skill, ok bool) {
	in, ok, err := rt.checkSkill(ctx, dir)
	if err != nil {
		in.AddProblem(&spec.ManifestError{Path: filepath.Join(dir, spec.ModuleFile), Msg: fmt.Sprintf("cannot be compiled now: %v", err)})
	}
	return view(in), ok
}

// CheckSkills checks the skill package dir, or, when dir is not one, every package directly in it
// (as CheckSkill checks one), in order of their directories' names. Their ids are settled as a
// scan of dir settles them (see registry.ResolveIDs): a directory whose name makes the id of another
// skill is reported broken, not dropped, so `skillbox validate` and `skillbox list` agree on
// which directories are skills and what their ids are. A dir that cannot be read gives none.
func (rt *Runtime) CheckSkills(ctx context.Context, dir string) []*Skill {
	p := rt.policy.Load()
	var loaded []*registry.Skill
	if s, ok := registry.Load(dir, p, nil); ok {
		loaded = []*registry.Skill{s}
	} else {
		subs, _ := registry.PackageCandidates(dir)
		for _, sub := range subs {
			if s, ok := registry.Load(sub, p, nil); ok {
				loaded = append(loaded, s)
			}
		}
		registry.ResolveIDs(loaded, nil)
	}
	for _, s := range loaded {
		s.DropListing() // what adopt would use: a check reads the files
		s.Verified()
		if err := rt.compileCheck(ctx, s); err != nil {
			s.AddProblem(&spec.ManifestError{Path: filepath.Join(s.Dir(), spec.ModuleFile), Msg: fmt.Sprintf("cannot be compiled now: %v", err)})
		}
		if err := rt.pythonCheck(ctx, s); err != nil {
			s.AddProblem(&spec.ManifestError{Path: s.Dir(), Msg: fmt.Sprintf("its Python files cannot be compiled now: %v", err)})
		}
		rt.warnUnaskedEnv(s)
	}
	return views(loaded)
}

// checkSkill is CheckSkill that returns a refused admission as its error (ErrClosed, a
// *engine.BusyError, engine.ErrOverBudget, ctx's error) rather than as a problem of the package.
func (rt *Runtime) checkSkill(ctx context.Context, dir string) (s *registry.Skill, ok bool, admitErr error) {
	s, ok = registry.LoadChecked(dir, rt.policy.Load())
	if !ok {
		return s, ok, nil
	}
	if err := rt.compileCheck(ctx, s); err != nil {
		return s, ok, err
	}
	rt.warnUnaskedEnv(s)
	return s, ok, rt.pythonCheck(ctx, s)
}

// compileCheck compiles the module of s, loaded and checked, and adds what is wrong with it to its
// problems; its error is a refused admission (see checkSkill).
func (rt *Runtime) compileCheck(ctx context.Context, s *registry.Skill) error {
	dir := s.Dir()
	// Compile only a package that is sound so far: its manifest parsed (so it has a grant) and its
	// module passed its bounds (so it has an info); its other problems are reported already.
	if s.Kind() != spec.Executable || s.Grant() == nil || s.State().Info == nil {
		return nil
	}
	modPath := filepath.Join(dir, spec.ModuleFile)
	m := engineModule(s)
	src, err := rt.engine.Source(&m)
	if err != nil {
		s.AddProblem(&spec.ManifestError{Path: modPath, Msg: err.Error()})
		return nil
	}
	// The engine's configuration, so the compiled code is the run's: wazero's cache keys on it, and
	// a validate then costs a run no second compile.
	pages := engine.MemoryPages(s.Grant().Limits.MemoryMiB)
	rc := engine.CompileConfig(pages, src.Stoppable)
	cache, err := engine.NewCache(rt.cacheDir)
	if err != nil {
		s.AddProblem(&spec.ManifestError{Path: modPath, Msg: fmt.Sprintf("compilation cache: %v", err)})
		return nil
	}
	if cache != nil {
		defer cache.Close(ctx)
		rc = rc.WithCompilationCache(cache)
	}
	done := rt.engine.CompileStarted(engine.CompileEvent{What: "skill " + s.ID(), Skill: s.ID(), Bytes: len(src.Wasm)})
	src, release, err := rt.engine.AdmitCompile(ctx, &m, pages, src)
	if err != nil {
		done(err)
	} else {
		defer func() { done(nil) }()
	}
	var ce *engine.CompileError
	switch {
	case errors.As(err, &ce):
		hint := "rebuild it with optimisations, or split its largest functions"
		if ce.Bound == "" {
			hint = "rebuild it: wazero refuses it"
		}
		s.AddProblem(&spec.ManifestError{Path: modPath, Msg: ce.Msg, Hint: hint})
		return nil
	case err != nil:
		return err
	}
	defer release()
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	defer r.Close(ctx)
	mod, err := r.CompileModule(ctx, src.Wasm)
	if err != nil {
		s.AddProblem(&spec.ManifestError{Path: modPath, Msg: fmt.Sprintf("does not compile: %v", err)})
		return nil
	}
	entry := "execute"
	if s.Manifest() != nil {
		entry = s.Manifest().Entrypoint
	}
	if _, exported := mod.ExportedFunctions()[entry]; !exported {
		names := make([]string, 0)
		for n := range mod.ExportedFunctions() {
			names = append(names, n)
		}
		sort.Strings(names)
		s.AddProblem(&spec.ManifestError{Path: modPath, Msg: fmt.Sprintf("does not export the entrypoint %q (it exports %v)", entry, names),
			Hint: `export it, or set "entrypoint" in the manifest`})
	}
	for _, f := range mod.ImportedFunctions() {
		module, name, _ := f.Import()
		if !knownImportModules[module] {
			s.AddProblem(&spec.ManifestError{Path: modPath, Msg: fmt.Sprintf("imports %s.%s, which the host does not provide", module, name),
				Hint: "only extism:host/env, extism:host/user and wasi_snapshot_preview1 are available"})
		}
	}
	return nil
}
