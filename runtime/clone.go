package runtime

import (
	"encoding/json"
	"maps"
	"slices"
)

// clone returns a deep copy of m (nil for nil): the registry's manifests are shared by every
// caller and every run, so none is ever handed out.
func (m *Manifest) clone() *Manifest {
	if m == nil {
		return nil
	}
	c := *m
	c.Tags = slices.Clone(m.Tags)
	c.Parameters = cloneRaw(m.Parameters)
	c.Result = cloneRaw(m.Result)
	c.Permissions = Permissions{
		Network: slices.Clone(m.Permissions.Network),
		Env:     slices.Clone(m.Permissions.Env),
		Files:   slices.Clone(m.Permissions.Files),
	}
	for _, s := range m.Permissions.Secrets {
		s.Hosts = slices.Clone(s.Hosts)
		c.Permissions.Secrets = append(c.Permissions.Secrets, s)
	}
	return &c
}

// clone returns a deep copy of g without its host side (the secret values and host paths the
// runs use): what a caller may see of a grant.
func (g *Grant) clone() *Grant {
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

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return slices.Clone(r)
}

// clone returns a deep copy of p; nil is the default policy.
func (p *Policy) clone() *Policy {
	if p == nil {
		return &Policy{}
	}
	c := *p
	c.Network = slices.Clone(p.Network)
	c.AllowNetworks = slices.Clone(p.AllowNetworks)
	c.Env = maps.Clone(p.Env)
	c.Secrets = make(map[string]PolicySecret, len(p.Secrets))
	for k, v := range p.Secrets {
		v.Hosts = slices.Clone(v.Hosts)
		c.Secrets[k] = v
	}
	c.Files = slices.Clone(p.Files)
	c.Scripts = maps.Clone(p.Scripts) // the Permissions values are not changed in place
	a := p.AgentSkills
	a.Network, a.Env, a.Secrets, a.Files = slices.Clone(a.Network), slices.Clone(a.Env), slices.Clone(a.Secrets), slices.Clone(a.Files)
	c.AgentSkills = a
	c.Bundles.TrustedKeys = slices.Clone(p.Bundles.TrustedKeys)
	return &c
}
