package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/skillbox-dev/skillbox/runtime"
)

type validation struct {
	ID       string   `json:"id"`
	Dir      string   `json:"dir"`
	Kind     string   `json:"kind"`
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems,omitempty"`
}

var cmdValidate = &command{
	summary: "check skill packages: manifest, module exports and imports; exit 1 if any is invalid",
	usage:   "[DIR ...]  (a skill directory, or a directory of skills; default: the --skills directories)",
	run: func(ctx context.Context, e *env, pos []string) int {
		dirs := pos
		if len(dirs) == 0 {
			dirs = dirsOrDefault(e.skills)
		}
		// The runtime only provides the policy and the cache here: it scans nothing itself.
		rt, err := e.runtimeFor(ctx, nil)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		results := []validation{}
		for _, d := range dirs {
			st, err := os.Stat(d)
			if err != nil || !st.IsDir() {
				return e.fail(exitUsage, "%s is not a directory", d)
			}
			for _, sd := range skillDirs(d) {
				s, ok := rt.CheckSkill(ctx, sd)
				if !ok {
					continue
				}
				v := validation{ID: s.ID(), Dir: sd, Kind: string(s.Kind()), Valid: s.Status() == runtime.StatusActive}
				if se, ok := s.Err().(*runtime.SkillError); ok {
					for _, p := range se.Problems {
						v.Problems = append(v.Problems, p.Error())
					}
				}
				results = append(results, v)
			}
		}
		invalid := 0
		for _, v := range results {
			if !v.Valid {
				invalid++
			}
		}
		if e.json {
			if err := writeJSON(e.stdout, results); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
		} else {
			for _, v := range results {
				if v.Valid {
					fmt.Fprintf(e.stdout, "ok      %s (%s)\n", clean(v.ID), v.Kind)
					continue
				}
				fmt.Fprintf(e.stdout, "invalid %s\n", clean(v.ID))
				for _, p := range v.Problems {
					fmt.Fprintf(e.stdout, "  %s\n", clean(p))
				}
			}
			fmt.Fprintf(e.stdout, "%d %s, %d invalid\n", len(results), plural(len(results), "skill", "skills"), invalid)
		}
		if len(results) == 0 {
			fmt.Fprintf(e.stderr, "skillbox: no skill packages found in %v\n", dirs)
			return exitFailed
		}
		if invalid > 0 {
			return exitFailed
		}
		return exitOK
	},
}

// skillDirs returns d itself when it is a skill package, else its subdirectories.
func skillDirs(d string) []string {
	entries, err := os.ReadDir(d)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		switch e.Name() {
		case "skill.json", "skill.yaml", "skill.yml", "SKILL.md":
			return []string{d}
		}
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && e.Name()[0] != '.' {
			out = append(out, filepath.Join(d, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
