package hostfuncs

import (
	"crypto/x509"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
)

// Grant is what one run may do: the intersection of what its manifest asks for and what the
// operator's policy allows, computed by the runtime. The zero Grant allows nothing.
type Grant struct {
	// Hosts the guest may fetch.
	Hosts netguard.List
	// Guard decides, at dial time, which special networks (loopback, private, ...) are reachable.
	Guard netguard.Guard
	// Env maps the granted variable names to their values.
	Env map[string]string
	// Secrets are added to outgoing requests to their hosts.
	Secrets []Secret
	// Mounts are the virtual directories the guest may read or write; the longest matching
	// path wins.
	Mounts []Mount
	Limits Limits
	// Askable is what a person may grant the run beyond this grant, when the runtime can put the
	// question to one (Call.Ask); nil asks nothing.
	Askable *Askable
	// RootCAs verifies https servers; nil means the host's system roots. For operators with a
	// private CA, and for tests.
	RootCAs *x509.CertPool
}

// Secret is a header the host adds to requests to Hosts. Value is the formatted header value and
// Raw the secret itself; neither enters guest memory: a response that carries either back (a
// host that echoes the request's headers) has it replaced by "[redacted]".
type Secret struct {
	Name   string
	Hosts  netguard.List
	Header string
	Value  string
	Raw    string
}

// Mount maps a virtual directory (Path, such as /workspace/notes) to a host directory (Dir).
type Mount struct {
	Path     string
	Dir      string
	Writable bool
	// Bounds, when set, is a budget of the mount's own that replaces the run's maxWriteBytes for
	// writes under it: the run's output directory, whose files the host collects after the run,
	// is held to what the host will collect, so a write past it fails in the guest instead of
	// being silently left out.
	Bounds *MountBounds
}

// MountBounds bounds what a mount may hold at the end of a run. Every field must be positive:
// a zero bound allows nothing.
type MountBounds struct {
	// MaxFiles is how many distinct files the guest may write under the mount; rewriting one
	// does not count again.
	MaxFiles int64
	// MaxFileBytes bounds each file.
	MaxFileBytes int64
	// MaxTotalBytes bounds all the files together, as they are at the end (a rewrite replaces
	// the file's size, it does not add to it).
	MaxTotalBytes int64
}

// Limits are the per-run quotas the host functions enforce. Zero means zero (nothing allowed),
// not unlimited: the runtime always fills them.
type Limits struct {
	MaxFetches    int64
	MaxFetchBytes int64
	MaxFileBytes  int64
	MaxWriteBytes int64
	MaxLogBytes   int64
	// FetchTimeout bounds one request (all its redirects), inside the run's own deadline.
	FetchTimeout time.Duration
}

// MaxWriteData is the most one write may hand the host: maxWriteBytes, or a bounded mount's
// maxFileBytes when that is larger (the run's output is held to its own bounds, not to
// maxWriteBytes). A guest ABI copies no more than this of a write's data.
func (g *Grant) MaxWriteData() int64 {
	n := g.Limits.MaxWriteBytes
	for _, m := range g.Mounts {
		if m.Bounds != nil && m.Writable {
			n = max(n, m.Bounds.MaxFileBytes)
		}
	}
	return n
}
