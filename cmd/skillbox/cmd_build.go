package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/spec"
)

var cmdBuild = &command{
	summary: "compile a skill's src/ to execute.wasm with its language's toolchain, then validate it",
	usage:   "[DIR]  (a skill directory or its src/; default: the current directory)",
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) > 1 {
			return e.fail(exitUsage, "build takes at most one directory")
		}
		dir := "."
		if len(pos) == 1 {
			dir = pos[0]
		}
		skillDir, err := skillDirOf(dir)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		if code, ok := buildScript(ctx, e, skillDir); ok {
			return code
		}
		src := filepath.Join(skillDir, "src")
		lang, err := detectLanguage(src)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		out := filepath.Join(skillDir, spec.ModuleFile)
		steps, produced, err := buildPlan(lang, src, out)
		var missing *missingToolchain
		if errors.As(err, &missing) {
			return e.fail(exitFailed, "%v", err)
		}
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		start := time.Now()
		if err := runSteps(ctx, steps, e.stderr); err != nil {
			return e.fail(exitFailed, "build %s (%s) failed: %v", skillDir, lang.name, err)
		}
		if produced != "" && produced != out {
			data, err := os.ReadFile(produced)
			if err != nil {
				return e.fail(exitFailed, "the %s build produced no %s: %v", lang.name, produced, err)
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
		}
		took := time.Since(start)
		rt, err := e.runtimeFor(ctx, nil)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		s, _ := rt.CheckSkill(ctx, skillDir)
		st, _ := os.Stat(out)
		if s == nil || s.Status() != catalog.StatusActive {
			fmt.Fprintf(e.stderr, "built %s, but it is not a valid skill:\n", clean(out))
			if se, ok := s.Err().(*spec.SkillError); ok {
				for _, p := range se.Problems {
					fmt.Fprintf(e.stderr, "  %s\n", clean(p.Error()))
				}
			}
			return exitFailed
		}
		if e.json {
			_ = writeJSON(e.stdout, map[string]any{"id": s.ID(), "lang": lang.name, "module": out, "bytes": st.Size(), "seconds": took.Seconds(), "sha256": s.ModuleHash()})
			return exitOK
		}
		fmt.Fprintf(e.stdout, "built %s: %s, %d bytes in %.1fs, valid\n", s.ID(), clean(out), st.Size(), took.Seconds())
		return exitOK
	},
}

// skillDirOf accepts a skill directory or its src/ directory.
func skillDirOf(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for _, d := range []string{abs, filepath.Dir(abs)} {
		for _, m := range spec.ManifestFiles() {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d, nil
			}
		}
	}
	return "", fmt.Errorf("%s is not a skill directory (no skill.json here or in its parent)", dir)
}

// buildScript handles build of a script skill, which has nothing to build: it validates the skill
// (a JavaScript or TypeScript skill is bundled, so a syntax error or a refused import shows here)
// and says so. ok is false for a compiled skill.
func buildScript(ctx context.Context, e *env, skillDir string) (code int, ok bool) {
	rt, err := e.runtimeFor(ctx, nil)
	if err != nil {
		return e.fail(exitFailed, "%v", err), true
	}
	defer rt.Close(context.Background())
	s, found := rt.CheckSkill(ctx, skillDir)
	if !found || s.Manifest() == nil || !s.Language().Script() {
		return 0, false
	}
	if s.Status() != catalog.StatusActive {
		fmt.Fprintf(e.stderr, "%s is a %s skill (nothing to build), but it is not valid:\n", s.ID(), s.Language())
		if se, ok := s.Err().(*spec.SkillError); ok {
			for _, p := range se.Problems {
				fmt.Fprintf(e.stderr, "  %s\n", clean(p.Error()))
			}
		}
		return exitFailed, true
	}
	if e.json {
		_ = writeJSON(e.stdout, map[string]any{"id": s.ID(), "lang": s.Language(), "module": nil, "sha256": s.ModuleHash()})
		return exitOK, true
	}
	fmt.Fprintf(e.stdout, "built %s: a %s skill runs its source as it is (nothing to build), valid\n", s.ID(), s.Language())
	return exitOK, true
}
