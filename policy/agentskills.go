package policy

import (
	"slices"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
)

// ForAgentSkills is the policy a skill an agent wrote is granted under: p's lists cut to the
// ceiling, no special networks, no grants to programs by skill id.
func (p *Policy) ForAgentSkills() *Policy {
	a := p.AgentSkills
	c := p.Clone()
	c.AllowNetworks, c.Scripts = nil, nil
	policyHosts := p.networkList()
	c.Network = nil
	for _, s := range a.Network {
		if q, err := netguard.ParsePattern(s); err == nil && policyHosts.Covers(q) {
			c.Network = append(c.Network, s)
		}
	}
	c.Env = map[string]string{}
	for _, name := range a.Env {
		if v, ok := p.Env[name]; ok {
			c.Env[name] = v
		}
	}
	c.Secrets = map[string]Secret{}
	for _, name := range a.Secrets {
		if v, ok := p.Secrets[name]; ok {
			c.Secrets[name] = v
		}
	}
	c.Files = nil
	for _, m := range p.Files {
		if slices.Contains(a.Files, m.Path) {
			c.Files = append(c.Files, m)
		}
	}
	c.Limits = p.Ceilings().Capped(a.Limits.WithDefaults(p.Ceilings()))
	return c
}
