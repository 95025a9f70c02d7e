package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"syscall"
)

// ErrBlocked is matched by errors.Is for every refusal of Guard: a
// *BlockedError, and the errors Control returns for addresses or networks it
// cannot check. It lets a host map any refusal to "denied" without caring why.
var ErrBlocked = errors.New("netguard: destination blocked by policy")

// BlockedError is a refusal of one address. Addr is the address as dialled
// (with its zone, if any); Class is why it is special; Reason says the same in
// words, naming the embedded IPv4 address for the IPv6 forms that carry one
// ("loopback (IPv4-mapped 127.0.0.1)").
type BlockedError struct {
	Addr   netip.Addr
	Class  Class
	Reason string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("address %s is %s; the policy does not allow %s", e.Addr, e.Reason, e.Class.plural())
}

// Redacted says what Error says without the address: what a sandboxed guest may be told. The
// address itself would let a guest map which names resolve to internal networks.
func (e *BlockedError) Redacted() string {
	return fmt.Sprintf("the destination address is %s; the policy does not allow %s", e.Class.is(), e.Class.plural())
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Guard refuses connections to special addresses (see Classify). Public
// addresses always pass: which public hosts a guest may reach is the job of
// the host allow-list (List), which Guard does not replace.
//
// The zero Guard refuses every special address. Allow lists the networks the
// operator explicitly permits despite that, such as 127.0.0.1/32 for tests or
// 10.0.0.0/8 for an internal API. An Allow entry matches an address with its
// zone removed and, for an IPv4-mapped address, its IPv4 form too, so
// 127.0.0.1/32 also allows ::ffff:127.0.0.1. It does not extend to NAT64,
// 6to4 or Teredo forms, which go through a translator and are allowed only by
// an IPv6 entry. A CloudMetadata address is allowed only by an entry that
// names exactly that address (169.254.169.254/32), never by a wider one: an
// operator who opens 169.254.0.0/16 or 0.0.0.0/0 rarely means to hand guests
// the instance's credentials.
//
// A Guard is a value: it holds no state and is safe for concurrent use as long
// as Allow is not modified while it is in use.
type Guard struct {
	Allow []netip.Prefix
}

// Check returns nil if a connection to a may be made, and a *BlockedError
// otherwise. The zero (invalid) address is always refused.
func (g Guard) Check(a netip.Addr) error {
	v := classify(a)
	if v.class == Public || (v.class != Invalid && g.allows(a, v.class)) {
		return nil
	}
	return &BlockedError{Addr: a, Class: v.class, Reason: v.reason()}
}

func (g Guard) allows(a netip.Addr, c Class) bool {
	bare := a.WithZone("")
	for _, p := range g.Allow {
		if !p.IsValid() {
			continue
		}
		if c == CloudMetadata && p.Bits() != p.Addr().BitLen() {
			continue
		}
		if p.Contains(bare) || p.Contains(bare.Unmap()) {
			return true
		}
	}
	return false
}

// Control has the signature of net.Dialer.Control. The dialer calls it for
// every connection attempt, after DNS resolution, with the address it is about
// to connect to ("ip:port", "[ip%zone]:port"), so the check sees the real
// destination whatever the name resolved to and however many redirects led
// there.
//
// Only TCP and UDP are checked; any other network, and an address that is not
// a literal ip:port, is refused (fail closed) with an error matching
// ErrBlocked.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
	default:
		return fmt.Errorf("netguard: refusing %s connection to %s: only tcp and udp can be checked: %w", network, address, ErrBlocked)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: refusing connection to %q, which is not an ip:port (%v): %w", address, err, ErrBlocked)
	}
	return g.Check(ap.Addr())
}

// DialContext returns a dial function, for http.Transport.DialContext, that
// dials with a copy of d (the zero Dialer when d is nil) whose control hook
// runs g.Control first and then whatever Control or ControlContext d already
// had. g.Allow is copied, so later changes to it do not affect the returned
// function.
//
// The transport must not use a proxy (http.DefaultTransport uses the
// environment's): through a proxy, the address dialled is the proxy's and the
// check says nothing about the real destination. Set Transport.Proxy to nil.
func (g Guard) DialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	g.Allow = slices.Clone(g.Allow)
	var dialer net.Dialer
	if d != nil {
		dialer = *d
	}
	prevCtx, prev := dialer.ControlContext, dialer.Control
	dialer.Control = nil
	dialer.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
		if err := g.Control(network, address, c); err != nil {
			return err
		}
		switch {
		case prevCtx != nil:
			return prevCtx(ctx, network, address, c)
		case prev != nil:
			return prev(network, address, c)
		}
		return nil
	}
	return dialer.DialContext
}
