package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/spec"
)

// SkillMount is the virtual path of a skill's own directory, always mounted read-only.
const SkillMount = "/skill"

// Grant is what a skill's runs may do: its manifest's request intersected with the policy.
// Values (env, secrets) and host paths are not exported: a grant is safe to print.
type Grant struct {
	Network []string       `json:"network"`
	Env     []string       `json:"env"`
	Secrets []string       `json:"secrets"`
	Files   []GrantedMount `json:"files"`
	Limits  spec.Limits    `json:"limits"`
	// Artifacts are the bounds of the run's output directory, when Files grants /output.
	Artifacts *ArtifactLimits `json:"artifacts,omitempty"`
	// Refused says, one line each, what the manifest asked for and did not get, and why.
	Refused []string `json:"refused,omitempty"`

	host *hostfuncs.Grant
}

// Host is the host side of the grant: the values of its env and secrets and its mounts' host
// directories, for the runtime to hand the host functions. A grant a caller is given
// (Skill.Grant) is a copy without it, and answers nil.
func (g *Grant) Host() *hostfuncs.Grant { return g.host }

// GrantedMount is a virtual directory a skill may use.
type GrantedMount struct {
	Path   string      `json:"path"`
	Access spec.Access `json:"access"`
}

// OutputFileBytes is the largest file the run may write to its output directory (0 without
// one): what one write there may hand the host.
func (g *Grant) OutputFileBytes() int64 {
	if g.Artifacts == nil {
		return 0
	}
	return g.Artifacts.MaxFileBytes
}

// policyMountFor returns the policy mount with the longest path containing p.
func policyMountFor(mounts []Mount, p string) *Mount {
	var best *Mount
	for i := range mounts {
		m := &mounts[i]
		if (p == m.Path || strings.HasPrefix(p, m.Path+"/")) && (best == nil || len(m.Path) > len(best.Path)) {
			best = m
		}
	}
	return best
}

// Clone returns a deep copy of g without its host side (the secret values and host paths the
// runs use): what a caller may see of a grant.
func (g *Grant) Clone() *Grant {
	if g == nil {
		return nil
	}
	c := &Grant{
		Network: slices.Clone(g.Network),
		Env:     slices.Clone(g.Env),
		Secrets: slices.Clone(g.Secrets),
		Files:   slices.Clone(g.Files),
		Limits:  g.Limits,
		Refused: slices.Clone(g.Refused),
	}
	if g.Artifacts != nil {
		a := *g.Artifacts
		c.Artifacts = &a
	}
	return c
}

// Grant computes what a skill with manifest m, living in skillDir, may do under p.
func (p *Policy) Grant(m *spec.Manifest, skillDir string) *Grant {
	g := &Grant{Network: []string{}, Env: []string{}, Secrets: []string{}, Files: []GrantedMount{}}
	h := &hostfuncs.Grant{Env: map[string]string{}, Guard: netguard.Guard{Allow: p.AllowNetworks}, RootCAs: p.RootCAs}
	policyHosts := p.networkList()
	covered := func(s string) (netguard.Pattern, bool) {
		q, err := netguard.ParsePattern(s)
		if err != nil {
			return q, false
		}
		for _, pp := range policyHosts {
			if pp.Covers(q) {
				return q, true
			}
		}
		return q, false
	}
	for _, s := range m.Permissions.Network {
		if q, ok := covered(s); ok {
			g.Network = append(g.Network, s)
			h.Hosts = append(h.Hosts, q)
		} else {
			g.Refused = append(g.Refused, fmt.Sprintf("network %s: the policy's network list does not allow it", s))
		}
	}
	for _, name := range m.Permissions.Env {
		if v, ok := p.Env[name]; ok {
			g.Env = append(g.Env, name)
			h.Env[name] = v
		} else {
			g.Refused = append(g.Refused, fmt.Sprintf("env %s: the policy gives no value for it", name))
		}
	}
	for _, s := range m.Permissions.Secrets {
		ps, ok := p.Secrets[s.Name]
		if !ok {
			g.Refused = append(g.Refused, fmt.Sprintf("secret %s: the policy has no such secret", s.Name))
			continue
		}
		val := ps.Value
		var secretHosts netguard.List
		for _, hs := range ps.Hosts {
			if pat, err := netguard.ParsePattern(hs); err == nil {
				secretHosts = append(secretHosts, pat)
			}
		}
		var hosts netguard.List
		for _, hs := range s.Hosts {
			q, ok := covered(hs)
			switch {
			case !ok:
				g.Refused = append(g.Refused, fmt.Sprintf("secret %s for %s: the policy's network list does not allow that host", s.Name, hs))
			case !secretHosts.Covers(q):
				g.Refused = append(g.Refused, fmt.Sprintf("secret %s for %s: the policy sends this secret only to %s", s.Name, hs, secretHosts))
			default:
				hosts = append(hosts, q)
			}
		}
		if len(hosts) == 0 {
			continue
		}
		format := s.Format
		if format == "" {
			format = "{value}"
		}
		g.Secrets = append(g.Secrets, s.Name)
		h.Secrets = append(h.Secrets, hostfuncs.Secret{Name: s.Name, Hosts: hosts, Header: s.Header,
			Value: strings.ReplaceAll(format, "{value}", val), Raw: val})
	}
	for _, f := range m.Permissions.Files {
		if f.Path == artifact.OutputMount || strings.HasPrefix(f.Path, artifact.OutputMount+"/") {
			p.grantOutput(g, h, f)
			continue
		}
		pm := policyMountFor(p.Files, f.Path)
		if pm == nil {
			g.Refused = append(g.Refused, fmt.Sprintf("files %s: no policy mount contains it", f.Path))
			continue
		}
		access := f.Access
		if pm.Access == spec.ReadOnly && access == spec.ReadWrite {
			access = spec.ReadOnly
			g.Refused = append(g.Refused, fmt.Sprintf("files %s: read-write asked, the policy allows read-only", f.Path))
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(f.Path, pm.Path), "/")
		dir := filepath.Join(strings.ReplaceAll(pm.HostPath, "{skill}", m.ID), filepath.FromSlash(rel))
		g.Files = append(g.Files, GrantedMount{Path: f.Path, Access: access})
		h.Mounts = append(h.Mounts, hostfuncs.Mount{Path: f.Path, Dir: dir, Writable: access == spec.ReadWrite})
		// A policy mount nested inside this one (a read-only /workspace/reference under a
		// read-write /workspace) keeps its own directory and access: granted alongside, it wins
		// by the longest-path rule, so the outer grant cannot write into it.
		for _, nested := range p.Files {
			if !strings.HasPrefix(nested.Path, f.Path+"/") {
				continue
			}
			na := access
			if nested.Access == spec.ReadOnly {
				na = spec.ReadOnly
			}
			g.Files = append(g.Files, GrantedMount{Path: nested.Path, Access: na})
			h.Mounts = append(h.Mounts, hostfuncs.Mount{Path: nested.Path, Dir: strings.ReplaceAll(nested.HostPath, "{skill}", m.ID), Writable: na == spec.ReadWrite})
		}
	}
	if skillDir != "" {
		g.Files = append(g.Files, GrantedMount{Path: SkillMount, Access: spec.ReadOnly})
		h.Mounts = append(h.Mounts, hostfuncs.Mount{Path: SkillMount, Dir: skillDir})
	}

	ceil := p.Ceilings()
	asked := m.Limits.WithDefaults(spec.DefaultLimits)
	g.Limits = asked.Capped(ceil)
	cf, af, mf := ceil.Fields(), asked.Fields(), m.Limits.Fields()
	for i, f := range g.Limits.Fields() {
		// Only what the manifest asked for is refused: a default it left alone is just capped.
		if *mf[i].Value != 0 && *af[i].Value > *f.Value {
			g.Refused = append(g.Refused, fmt.Sprintf("limits.%s: %d asked, the policy caps it at %d", f.Name, *af[i].Value, *cf[i].Value))
		}
	}
	h.Limits = hostfuncs.Limits{
		MaxFetches: g.Limits.MaxFetches, MaxFetchBytes: g.Limits.MaxFetchBytes, MaxFileBytes: g.Limits.MaxFileBytes,
		MaxWriteBytes: g.Limits.MaxWriteBytes, MaxLogBytes: g.Limits.MaxLogBytes,
		FetchTimeout: min(time.Duration(g.Limits.TimeoutMs)*time.Millisecond, 30*time.Second),
	}
	h.Askable = p.askable(m.ID)
	g.host = h
	return g
}

// grantOutput grants the run's output directory, /output, as f asks, within the policy's
// artifacts section. It needs no policy mount: the directory is made for each run (its host
// Dir is filled then, see newOutput). It is granted whole and for writing, or not at all.
func (p *Policy) grantOutput(g *Grant, h *hostfuncs.Grant, f spec.FileRequest) {
	switch {
	case f.Path != artifact.OutputMount:
		g.Refused = append(g.Refused, fmt.Sprintf("files %s: the output directory is granted whole: ask for %s", f.Path, artifact.OutputMount))
		return
	case f.Access != spec.ReadWrite:
		g.Refused = append(g.Refused, fmt.Sprintf("files %s: the output directory is for writing: ask for read-write", f.Path))
		return
	case p.Artifacts.Disabled:
		g.Refused = append(g.Refused, fmt.Sprintf("files %s: the policy turns the output directory off (artifacts.enabled: false)", f.Path))
		return
	case g.Artifacts != nil: // asked twice
		return
	}
	a := p.Artifacts.WithDefaults()
	g.Artifacts = &ArtifactLimits{MaxFiles: a.MaxFiles, MaxFileBytes: a.MaxFileBytes, MaxTotalBytes: a.MaxTotalBytes}
	g.Files = append(g.Files, GrantedMount{Path: artifact.OutputMount, Access: spec.ReadWrite})
	h.Mounts = append(h.Mounts, hostfuncs.Mount{Path: artifact.OutputMount, Writable: true,
		Bounds: &hostfuncs.MountBounds{MaxFiles: a.MaxFiles, MaxFileBytes: a.MaxFileBytes, MaxTotalBytes: a.MaxTotalBytes}})
}

// networkList is the policy's network list as patterns (a policy file's entries were checked when
// it was read; one that does not parse grants nothing).
func (p *Policy) networkList() netguard.List {
	var l netguard.List
	for _, s := range p.Network {
		if pat, err := netguard.ParsePattern(s); err == nil {
			l = append(l, pat)
		}
	}
	return l
}
