package version

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// ValidSkill reports whether name is what a version store may file a version under: a
// skill id, or a user's own skill's id with its user's scope ("notes@<16 hex digits>"), which
// keeps two users' skills of the same id, and a tenant's, apart.
func ValidSkill(name string) bool {
	id, scope, scoped := strings.Cut(name, "@")
	if !scoped {
		return spec.ValidID(name)
	}
	if len(scope) != 16 || !spec.ValidID(id) {
		return false
	}
	_, err := hex.DecodeString(scope)
	return err == nil && strings.ToLower(scope) == scope
}

// OwnedBy reports whether a version filed under name (see ValidSkill) may name
// user as its Version.User: a tenant's skill names none, a user's own skill the user whose
// scope it carries. A store holds every version it adds to that.
func OwnedBy(name, user string) bool {
	_, scope, scoped := strings.Cut(name, "@")
	if !scoped {
		return user == ""
	}
	return user != "" && scope == access.UserScope(user)
}

// ErrBadQuery is a FindVersions query out of its bounds.
var ErrBadQuery = errors.New("bad version query")

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

// Provenance says who brought a version and how, for its record.
type Provenance struct {
	// Source is "folder", "upload", "bundle" or "agent".
	Source string
	// By names who: an API key's name, "local" for the operator's own shell.
	By string
}
