package runtime

import (
	"fmt"
	"slices"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// Widening says, one readable line each, what next grants that base does not: hosts, variables,
// secrets and mounts it adds, a read-only mount it makes writable, and each limit it raises. It
// is the one rule that decides whether a new version needs an admin's approval (an empty answer
// means it does not). A nil base grants nothing, so everything next grants is a widening.
//
// A host is a widening unless a pattern of base covers it ("api.example.com" under
// "*.example.com" is not); a refused request is no widening, as it was never granted.
func Widening(base, next *policy.Grant) []string {
	if next == nil {
		return nil
	}
	if base == nil {
		base = &policy.Grant{}
	}
	var out []string
	var basePatterns []netguard.Pattern
	for _, h := range base.Network {
		if p, err := netguard.ParsePattern(h); err == nil {
			basePatterns = append(basePatterns, p)
		}
	}
	for _, h := range next.Network {
		p, err := netguard.ParsePattern(h)
		covered := false
		for _, b := range basePatterns {
			if err == nil && b.Covers(p) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, "network: + "+h)
		}
	}
	for _, v := range next.Env {
		if !slices.Contains(base.Env, v) {
			out = append(out, "env: + "+v)
		}
	}
	for _, v := range next.Secrets {
		if !slices.Contains(base.Secrets, v) {
			out = append(out, "secrets: + "+v)
		}
	}
	for _, m := range next.Files {
		i := slices.IndexFunc(base.Files, func(b policy.GrantedMount) bool { return b.Path == m.Path })
		switch {
		case i < 0:
			out = append(out, fmt.Sprintf("files: + %s (%s)", m.Path, m.Access))
		case m.Access == spec.ReadWrite && base.Files[i].Access != spec.ReadWrite:
			out = append(out, fmt.Sprintf("files: %s %s -> %s", m.Path, base.Files[i].Access, m.Access))
		}
	}
	bl, nl := base.Limits, next.Limits
	bf := bl.Fields()
	for i, f := range nl.Fields() {
		if *f.Value > *bf[i].Value {
			out = append(out, fmt.Sprintf("limits.%s: %d -> %d", f.Name, *bf[i].Value, *f.Value))
		}
	}
	return out
}

// versionGrant is everything a version of s may do: its execute's grant and its programs'
// (scripts/) together, each list the union of both and each limit the higher. It is what a
// version records, and what the next version is compared with.
func versionGrant(s *Skill) *policy.Grant {
	g := &policy.Grant{Network: []string{}, Env: []string{}, Secrets: []string{}, Files: []policy.GrantedMount{}}
	for _, part := range []*policy.Grant{s.grant, s.programGrant} {
		if part == nil {
			continue
		}
		g.Network = union(g.Network, part.Network)
		g.Env = union(g.Env, part.Env)
		g.Secrets = union(g.Secrets, part.Secrets)
		for _, m := range part.Files {
			i := slices.IndexFunc(g.Files, func(b policy.GrantedMount) bool { return b.Path == m.Path })
			switch {
			case i < 0:
				g.Files = append(g.Files, m)
			case m.Access == spec.ReadWrite:
				g.Files[i].Access = spec.ReadWrite
			}
		}
		gf := g.Limits.Fields()
		for i, f := range part.Limits.Fields() {
			*gf[i].Value = max(*gf[i].Value, *f.Value)
		}
		g.Refused = union(g.Refused, part.Refused)
	}
	return g
}

// union is a with each element of b it lacks appended, in order.
func union(a, b []string) []string {
	for _, v := range b {
		if !slices.Contains(a, v) {
			a = append(a, v)
		}
	}
	return a
}
