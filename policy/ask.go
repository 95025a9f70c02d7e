package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/spec"
)

// Ask is what a person may grant a run beyond its grant: when a run's call is refused for a
// host, a variable or a directory listed here, and the run's face can put the question to a
// person (an MCP client that takes elicitations, the HTTP API and its console, a terminal), the
// run waits for an answer instead of being refused at once. The zero Ask asks nothing: every
// refusal is final, as without it.
//
// A person's answer never reaches past this list: a host outside Network is refused without
// asking, whatever anyone would answer, and the special networks (AllowNetworks) are still
// checked at dial time.
type Ask struct {
	// Network lists host patterns a person may allow a run to fetch.
	Network []string
	// Env gives the values of the variables a person may release to a run, by name.
	Env map[string]string
	// Files lists the directories a person may mount for a run, as the policy's files do.
	Files []Mount
	// Timeout bounds how long a run waits for an answer (DefaultAskTimeout when zero); never
	// past the run's own deadline.
	Timeout time.Duration
	// MaxGrant is the longest a lasting grant may last (DefaultAskMaxGrant when zero).
	MaxGrant time.Duration
	// Tenant makes a lasting grant cover every caller of the tenant (scope: tenant); by default
	// it covers only the caller whose run asked (scope: caller).
	Tenant bool
	// CallerAnswers lets a run's own caller answer its requests over the API (answeredBy:
	// caller); by default only an admin may. A face that asks its own caller (an MCP client's
	// elicitation, a terminal prompt) is that caller answering.
	CallerAnswers bool
	// MaxPerRun bounds the requests one run may make (DefaultAskPerRun when zero); past it, a
	// refusal is final.
	MaxPerRun int
	// MaxPending bounds the requests waiting for an answer at once in a runtime, a tenant's
	// (DefaultAskPending when zero); past it, a refusal is final.
	MaxPending int
}

// The defaults and ceilings of Ask.
const (
	DefaultAskTimeout  = 2 * time.Minute
	DefaultAskMaxGrant = 24 * time.Hour
	DefaultAskPerRun   = 4
	DefaultAskPending  = 32
	maxAskTimeoutMs    = int64(time.Hour / time.Millisecond)
	maxAskGrantMinutes = 30 * 24 * 60
	maxAskPerRun       = 64
	maxAskPending      = 4096
)

// Enabled reports whether anything may be asked.
func (a Ask) Enabled() bool { return len(a.Network)+len(a.Env)+len(a.Files) > 0 }

// WithDefaults fills a's zero bounds.
func (a Ask) WithDefaults() Ask {
	if a.Timeout <= 0 {
		a.Timeout = DefaultAskTimeout
	}
	if a.MaxGrant <= 0 {
		a.MaxGrant = DefaultAskMaxGrant
	}
	if a.MaxPerRun <= 0 {
		a.MaxPerRun = DefaultAskPerRun
	}
	if a.MaxPending <= 0 {
		a.MaxPending = DefaultAskPending
	}
	return a
}

func (a Ask) clone() Ask {
	a.Network, a.Env, a.Files = slices.Clone(a.Network), maps.Clone(a.Env), slices.Clone(a.Files)
	return a
}

// askPolicy reads the ask section.
func askPolicy(c *spec.Checker, d spec.Doc, base string, lookupEnv func(string) (string, bool)) Ask {
	c.Known(d, "ask", "network", "env", "files", "timeoutMs", "maxGrantMinutes", "scope", "answeredBy", "maxPerRun", "maxPending")
	a := Ask{Env: map[string]string{}}
	for i, h := range c.StrList(d, "ask", "network") {
		if _, err := netguard.ParsePattern(h); err != nil {
			c.Add(fmt.Sprintf("ask.network[%d]", i), "", "%v", err)
			continue
		}
		a.Network = append(a.Network, h)
	}
	values(c, c.Object(d, "ask", "env"), "ask.env", a.Env, lookupEnv)
	a.Files = mounts(c, c.List(d, "ask", "files"), "ask.files", base)
	a.Timeout = time.Duration(c.Int(d, "ask", "timeoutMs", maxAskTimeoutMs)) * time.Millisecond
	a.MaxGrant = time.Duration(c.Int(d, "ask", "maxGrantMinutes", maxAskGrantMinutes)) * time.Minute
	a.MaxPerRun = int(c.Int(d, "ask", "maxPerRun", maxAskPerRun))
	a.MaxPending = int(c.Int(d, "ask", "maxPending", maxAskPending))
	switch s := c.Str(d, "ask", "scope", false); s {
	case "", "caller":
	case "tenant":
		a.Tenant = true
	default:
		c.Add("ask.scope", `use "caller" (a lasting grant covers the caller who was asked) or "tenant" (every caller of the tenant)`, "%q is not a scope", s)
	}
	switch s := c.Str(d, "ask", "answeredBy", false); s {
	case "", "admin":
	case "caller":
		a.CallerAnswers = true
	default:
		c.Add("ask.answeredBy", `use "admin" (only an admin answers over the API) or "caller" (the run's caller may too)`, "%q is not who answers", s)
	}
	return a
}

// askable is the host side of what a person may grant a run of the skill with id under p's ask
// section: nil when nothing may be asked.
func (p *Policy) askable(id string) *hostfuncs.Askable {
	if !p.Ask.Enabled() {
		return nil
	}
	a := &hostfuncs.Askable{Env: maps.Clone(p.Ask.Env)}
	for _, s := range p.Ask.Network {
		if pat, err := netguard.ParsePattern(s); err == nil {
			a.Hosts = append(a.Hosts, pat)
		}
	}
	for _, m := range p.Ask.Files {
		a.Mounts = append(a.Mounts, hostfuncs.Mount{Path: m.Path, Dir: strings.ReplaceAll(m.HostPath, "{skill}", id),
			Writable: m.Access == spec.ReadWrite})
	}
	return a
}
