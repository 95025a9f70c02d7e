package runtime

import (
	"slices"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// versionGrant is everything a version of s may do: its execute's grant and its programs'
// (scripts/) together, each list the union of both and each limit the higher. It is what a
// version records, and what the next version is compared with.
func versionGrant(s *registry.Skill) *policy.Grant {
	g := &policy.Grant{Network: []string{}, Env: []string{}, Secrets: []string{}, Files: []policy.GrantedMount{}}
	for _, part := range []*policy.Grant{s.Grant(), s.ProgramGrant()} {
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
