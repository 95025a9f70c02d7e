package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillbox-dev/skillbox/agent/modules"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

type validation struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Dir      string   `json:"dir"`
	Kind     string   `json:"kind"`
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems,omitempty"`
	// Warnings are what loads but breaks the Agent Skills format (a name that is not
	// lowercase-hyphen, a description over 1,024 characters, no frontmatter, ...): the skill
	// is valid, and they say how to make it work with every agent.
	Warnings []string `json:"warnings,omitempty"`
	// VendorRules are the vendors' rules the skill's tool breaks (see vendorRules).
	VendorRules []tooldef.Breach `json:"vendorRules,omitempty"`
}

var cmdValidate = &command{
	summary: "check skill packages: manifest, module exports and imports, SKILL.md against the Agent Skills rules (warnings); exit 1 if any is invalid",
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
			// The packages, their ids and their clashes as a scan (list, serve) finds them.
			for _, s := range rt.CheckSkills(ctx, d) {
				v := validation{ID: s.ID(), Name: s.Name(), Dir: s.Dir(), Kind: string(s.Kind()), Valid: s.Status() == catalog.StatusActive, Warnings: s.Warnings()}
				if se, ok := s.Err().(*spec.SkillError); ok {
					for _, p := range se.Problems {
						v.Problems = append(v.Problems, p.Error())
					}
				}
				v.VendorRules = vendorRules(s)
				// Modules (modules/<name>/module.json) are programs of the skill a model calls by
				// name: one that cannot be read is a problem, named by its file and field.
				if _, err := modules.Load(s.Dir()); err != nil {
					v.Valid = false
					if se, ok := err.(*spec.SkillError); ok {
						for _, p := range se.Problems {
							v.Problems = append(v.Problems, p.Error())
						}
					} else {
						v.Problems = append(v.Problems, fmt.Sprintf("%s: %v", modules.Dir, err))
					}
				}
				results = append(results, v)
			}
		}
		invalid, warned := 0, 0
		for _, v := range results {
			if !v.Valid {
				invalid++
			}
			if len(v.Warnings) > 0 || len(v.VendorRules) > 0 {
				warned++
			}
		}
		if e.json {
			if err := writeJSON(e.stdout, results); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
		} else {
			for _, v := range results {
				where := ""
				if base := filepath.Base(v.Dir); base != v.ID {
					where = ", in " + clean(base) // the id was made of the directory's name
				}
				if v.Valid {
					fmt.Fprintf(e.stdout, "ok      %s (%s%s)\n", clean(v.ID), v.Kind, where)
				} else {
					fmt.Fprintf(e.stdout, "invalid %s\n", clean(v.ID))
				}
				for _, p := range v.Problems {
					fmt.Fprintf(e.stdout, "  %s\n", clean(p))
				}
				for _, w := range v.Warnings {
					fmt.Fprintf(e.stdout, "  warning: %s\n", clean(w))
				}
				printVendorRules(e.stdout, v.VendorRules)
			}
			fmt.Fprintf(e.stdout, "%d %s, %d invalid", len(results), plural(len(results), "skill", "skills"), invalid)
			if warned > 0 {
				fmt.Fprintf(e.stdout, ", %d with warnings", warned)
			}
			fmt.Fprintln(e.stdout)
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

// vendorRules returns the rules of the model vendors (OpenAI, Anthropic, MCP) that the tool of
// a valid executable skill breaks: each makes that vendor refuse a whole request that holds the
// tool, so the tool lists leave it out (tooldef.VendorRules). They are warnings, not problems:
// the skill runs, and is listed for the other vendors; validate's exit status does not change.
func vendorRules(s *runtime.Skill) []tooldef.Breach {
	if s.Status() != catalog.StatusActive {
		return nil
	}
	return tooldef.VendorBreaches(s)
}

// printVendorRules writes one warning line per rule broken: the vendor, the rule, what breaks
// it and how to fix it, and the tool lists that leave the skill out.
func printVendorRules(w io.Writer, breaches []tooldef.Breach) {
	for _, b := range breaches {
		formats := make([]string, len(b.LeftOutOf))
		for i, f := range b.LeftOutOf {
			formats[i] = string(f)
		}
		fmt.Fprintf(w, "  warning: %s rule %s: %s (left out of the tool lists for %s)\n", b.Vendor, b.Rule, clean(b.Problem), strings.Join(formats, ", "))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
