package hostfuncs

import (
	"context"
	"net/url"
	"strings"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
)

// Askable is what a person may grant a run beyond its Grant: the policy's ask section, with host
// directories resolved for the run's skill. A refusal of anything else is final.
type Askable struct {
	Hosts  netguard.List
	Env    map[string]string
	Mounts []Mount
}

// The kinds of Permission.
const (
	PermNetwork = "network"
	PermEnv     = "env"
	PermFiles   = "files"
)

// Permission is one thing a run asks a person for: a host (Target is a host pattern that names
// one host, any port), a variable (its name) or a directory (its virtual path, with the Access
// the policy's ask section gives it).
type Permission struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Access string `json:"access,omitempty"`
}

// Asker puts p to a person and reports whether they allowed it for this run. It returns when it
// has an answer, when its own wait ends, or when ctx does; anything but an allow is a no.
type Asker func(ctx context.Context, p Permission) bool

// maxAnswers bounds the answers a run remembers: past it, nothing more is asked. The runtime's
// own bound on requests per run is far lower; this one holds whatever Asker is set.
const maxAnswers = 64

// allowance is what a person allowed one run, beyond its Grant.
type allowance struct {
	hosts   netguard.List
	mounts  []Mount
	answers map[Permission]bool
}

// ask asks the run's Asker for p once per run: a second call gets the first answer, so a skill
// that retries a refused call does not ask again.
func (c *Call) ask(ctx context.Context, p Permission) bool {
	if c.Ask == nil {
		return false
	}
	c.mu.Lock()
	ans, asked := c.allowed.answers[p]
	full := len(c.allowed.answers) >= maxAnswers
	c.mu.Unlock()
	if asked {
		return ans
	}
	if full {
		return false
	}
	ans = c.Ask(ctx, p)
	c.mu.Lock()
	if c.allowed.answers == nil {
		c.allowed.answers = map[Permission]bool{}
	}
	c.allowed.answers[p] = ans
	c.mu.Unlock()
	return ans
}

// askable returns the run's Askable, nil when it may ask nothing.
func (c *Call) askable() *Askable {
	if c.Ask == nil {
		return nil
	}
	return c.Grant.Askable
}

// hostAllowed reports whether host (a URL's hostname) on port may be fetched beyond the grant:
// a person allowed it, or allows it now. An allowance holds only while the host is askable.
func (c *Call) hostAllowed(ctx context.Context, host, port string) bool {
	if c.hostAllowedBefore(host, port) {
		return true
	}
	if a := c.askable(); a == nil || !a.Hosts.Match(host, port) {
		return false
	}
	name := host
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	pat, err := netguard.ParsePattern(name)
	if err != nil || !c.ask(ctx, Permission{Kind: PermNetwork, Target: pat.String()}) {
		return false
	}
	c.mu.Lock()
	c.allowed.hosts = append(c.allowed.hosts, pat)
	c.mu.Unlock()
	return true
}

// hostAllowedBefore reports whether a person already allowed host on port for this run.
func (c *Call) hostAllowedBefore(host, port string) bool {
	a := c.askable()
	if a == nil || !a.Hosts.Match(host, port) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.allowed.hosts.Match(host, port)
}

// envAllowed returns the value of a variable the grant lacks, when a person allows it.
func (c *Call) envAllowed(ctx context.Context, name string) (string, bool) {
	a := c.askable()
	if a == nil {
		return "", false
	}
	v, ok := a.Env[name]
	if !ok || !c.ask(ctx, Permission{Kind: PermEnv, Target: name}) {
		return "", false
	}
	return v, true
}

// mountAllowed returns the askable mount containing p once a person allows it (nil if none does,
// or they do not).
func (c *Call) mountAllowed(ctx context.Context, p string) *Mount {
	a := c.askable()
	if a == nil {
		return nil
	}
	m := longestMount(a.Mounts, p)
	if m == nil {
		return nil
	}
	c.mu.Lock()
	for _, had := range c.allowed.mounts {
		if had.Path == m.Path {
			c.mu.Unlock()
			return m
		}
	}
	c.mu.Unlock()
	access := "read-only"
	if m.Writable {
		access = "read-write"
	}
	if !c.ask(ctx, Permission{Kind: PermFiles, Target: m.Path, Access: access}) {
		return nil
	}
	c.mu.Lock()
	c.allowed.mounts = append(c.allowed.mounts, *m)
	c.mu.Unlock()
	return m
}

// longestMount returns the mount of ms with the longest path containing p.
func longestMount(ms []Mount, p string) *Mount {
	var best *Mount
	for i := range ms {
		m := &ms[i]
		if (p == m.Path || strings.HasPrefix(p, m.Path+"/")) && (best == nil || len(m.Path) > len(best.Path)) {
			best = m
		}
	}
	return best
}

// Permit asks a person, when the run may ask one, for what the operation op ("fetch",
// "readFile", "writeFile" or "env") on target (a URL, a virtual path, a name) needs and the grant
// lacks, so that the operation that follows finds it allowed. It refuses nothing itself. A
// broker calls it before an operation it bounds with a timeout of its own, so that the person's
// time to answer is not the operation's.
func (c *Call) Permit(ctx context.Context, op, target string) {
	if c.askable() == nil {
		return
	}
	switch op {
	case "fetch":
		if u, err := url.Parse(target); err == nil && u.Hostname() != "" && !c.Grant.Hosts.Match(u.Hostname(), portOf(u)) {
			c.hostAllowed(ctx, u.Hostname(), portOf(u))
		}
	case "readFile", "writeFile":
		if longestMount(c.Grant.Mounts, target) == nil {
			c.mountAllowed(ctx, target)
		}
	case "env":
		_, secret := c.Grant.secretNamed(target)
		if _, ok := c.Grant.Env[target]; !ok && !secret {
			c.envAllowed(ctx, target)
		}
	}
}
