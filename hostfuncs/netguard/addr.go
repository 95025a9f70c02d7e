package netguard

import (
	"net/netip"
	"strconv"
)

// Class names the reason an address is special: not an ordinary public
// unicast address that a sandboxed guest may reach by default. The zero value
// is Public.
type Class uint8

// The classes Classify reports. They follow the IANA special-purpose address
// registries; where ranges overlap, the most specific class wins (a cloud
// metadata address is CloudMetadata, not LinkLocal or Private).
const (
	// Public is an ordinary, globally routed unicast address.
	Public Class = iota
	// Invalid is the zero netip.Addr: there is nothing to connect to.
	Invalid
	// Unspecified is 0.0.0.0 or ::, which connect() treats as "this host".
	Unspecified
	// ThisNetwork is 0.0.0.0/8 (RFC 791); Linux routes some of it to the
	// local host.
	ThisNetwork
	// Loopback is 127.0.0.0/8 and ::1.
	Loopback
	// Private is 10/8, 172.16/12, 192.168/16 (RFC 1918), fc00::/7 (unique
	// local) and the deprecated site-local fec0::/10.
	Private
	// SharedAddressSpace is the carrier-grade NAT range 100.64.0.0/10
	// (RFC 6598), used inside provider networks, Tailscale among them.
	SharedAddressSpace
	// LinkLocal is 169.254.0.0/16 and fe80::/10.
	LinkLocal
	// CloudMetadata is an instance metadata service: 169.254.169.254 (AWS,
	// GCP, Azure, Oracle, ...), fd00:ec2::254 (AWS IPv6) and 100.100.100.200
	// (Alibaba). They hand out credentials, so Guard only allows them when an
	// Allow entry names the exact address.
	CloudMetadata
	// Multicast is 224.0.0.0/4 and ff00::/8.
	Multicast
	// Broadcast is 255.255.255.255.
	Broadcast
	// Reserved is 240.0.0.0/4, and in IPv6 everything outside the global
	// unicast block 2000::/3 not named by another class, plus the SRv6 SID
	// block 5f00::/16 and the ORCHID blocks, none of which are routed on the
	// Internet.
	Reserved
	// Benchmarking is 198.18.0.0/15 and 2001:2::/48.
	Benchmarking
	// IETFProtocol is 192.0.0.0/24 and 2001::/23 (other than Teredo, which is
	// judged by the addresses it embeds).
	IETFProtocol
	// Documentation is 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
	// 2001:db8::/32 and 3fff::/20.
	Documentation
	// LocalNAT64 is the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215). The
	// operator chooses where the IPv4 address sits inside it, so it cannot be
	// judged by the embedded address and is refused outright.
	LocalNAT64
	// Zoned is an otherwise public IPv6 address with a zone ("%eth0"). A zone
	// picks a network interface, which a guest has no business doing.
	Zoned
)

// classInfo is how each class reads in messages.
var classInfo = [...]struct {
	name   string // Class.String: short, stable, for logs and metrics
	is     string // completes "address X is ..."
	plural string // completes "the policy does not allow ..."
}{
	Public:             {"public", "public", "public addresses"},
	Invalid:            {"invalid", "not a valid IP address", "invalid addresses"},
	Unspecified:        {"unspecified", "the unspecified address", "unspecified addresses"},
	ThisNetwork:        {"this-network", `in the "this network" block 0.0.0.0/8`, `"this network" addresses`},
	Loopback:           {"loopback", "loopback", "loopback addresses"},
	Private:            {"private", "private", "private networks"},
	SharedAddressSpace: {"shared-address-space", "in the carrier-grade NAT range 100.64.0.0/10", "carrier-grade NAT addresses"},
	LinkLocal:          {"link-local", "link-local", "link-local addresses"},
	CloudMetadata:      {"cloud-metadata", "a cloud metadata endpoint", "cloud metadata endpoints unless the exact address is allowed"},
	Multicast:          {"multicast", "multicast", "multicast addresses"},
	Broadcast:          {"broadcast", "the broadcast address", "broadcast addresses"},
	Reserved:           {"reserved", "reserved", "reserved addresses"},
	Benchmarking:       {"benchmarking", "a benchmarking address", "benchmarking networks"},
	IETFProtocol:       {"ietf-protocol", "an IETF protocol assignment", "IETF protocol assignments"},
	Documentation:      {"documentation", "a documentation address", "documentation networks"},
	LocalNAT64:         {"local-nat64", "in the local-use NAT64 prefix 64:ff9b:1::/48", "local-use NAT64 addresses"},
	Zoned:              {"zoned", "scoped to a network interface", "interface-scoped (zoned) addresses"},
}

// String returns a short, stable name such as "private" or "cloud-metadata".
func (c Class) String() string {
	if int(c) < len(classInfo) {
		return classInfo[c].name
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

func (c Class) is() string {
	if int(c) < len(classInfo) {
		return classInfo[c].is
	}
	return c.String()
}

func (c Class) plural() string {
	if int(c) < len(classInfo) {
		return classInfo[c].plural
	}
	return c.String() + " addresses"
}

// Classify reports whether a is special, and why. An invalid (zero) address is
// special (Invalid): callers that fail closed need no separate check.
//
// IPv6 forms that carry an IPv4 address are judged by that address, because
// that is where the packets end up:
//
//   - IPv4-mapped ::ffff:a.b.c.d (a dual-stack socket connects to a.b.c.d);
//   - IPv4-compatible ::a.b.c.d (deprecated; :: and ::1 keep their own class);
//   - NAT64 64:ff9b::a.b.c.d (RFC 6052 well-known prefix);
//   - 6to4 2002:AABB:CCDD::/48, embedding a.b.c.d in bits 16-47;
//   - Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC: the client address is the
//     last 32 bits XOR 0xffffffff; it is special if either the client or the
//     server (bits 32-63) address is.
//
// So ::ffff:8.8.8.8 is Public and ::ffff:127.0.0.1 is Loopback. The local-use
// NAT64 prefix 64:ff9b:1::/48 is refused outright (LocalNAT64) because where
// it embeds the IPv4 address is a local choice.
//
// A zone is ignored for classification, except that an otherwise public
// address with a zone is Zoned.
func Classify(a netip.Addr) (Class, bool) {
	v := classify(a)
	return v.class, v.class != Public
}

// verdict is Classify's answer plus, for the IPv6 forms that embed an IPv4
// address, which form and which address, so messages can say why
// ::ffff:127.0.0.1 is loopback.
type verdict struct {
	class Class
	via   string     // "IPv4-mapped", "NAT64", "6to4", ...; "" when not embedded
	inner netip.Addr // the embedded IPv4 address when via != ""
}

func (v verdict) reason() string {
	if v.via == "" {
		return v.class.is()
	}
	return v.class.is() + " (" + v.via + " " + v.inner.String() + ")"
}

type rangeClass struct {
	prefix netip.Prefix
	class  Class
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// v4Ranges and v6Ranges are searched in order, so a more specific range must
// come before a range that contains it. :: and ::1 are not in v6Ranges:
// classify6 handles them before the IPv4-compatible block ::/96 that holds
// them.
var v4Ranges = []rangeClass{
	{pfx("0.0.0.0/32"), Unspecified},
	{pfx("0.0.0.0/8"), ThisNetwork},
	{pfx("10.0.0.0/8"), Private},
	{pfx("100.100.100.200/32"), CloudMetadata},
	{pfx("100.64.0.0/10"), SharedAddressSpace},
	{pfx("127.0.0.0/8"), Loopback},
	{pfx("169.254.169.254/32"), CloudMetadata},
	{pfx("169.254.0.0/16"), LinkLocal},
	{pfx("172.16.0.0/12"), Private},
	{pfx("192.0.0.0/24"), IETFProtocol},
	{pfx("192.0.2.0/24"), Documentation},
	{pfx("192.168.0.0/16"), Private},
	{pfx("198.18.0.0/15"), Benchmarking},
	{pfx("198.51.100.0/24"), Documentation},
	{pfx("203.0.113.0/24"), Documentation},
	{pfx("224.0.0.0/4"), Multicast},
	{pfx("255.255.255.255/32"), Broadcast},
	{pfx("240.0.0.0/4"), Reserved},
}

var v6Ranges = []rangeClass{
	{pfx("fd00:ec2::254/128"), CloudMetadata},
	{pfx("64:ff9b:1::/48"), LocalNAT64},
	{pfx("2001:db8::/32"), Documentation},
	{pfx("3fff::/20"), Documentation},
	{pfx("2001:2::/48"), Benchmarking},
	{pfx("2001:10::/28"), Reserved}, // ORCHID (deprecated)
	{pfx("2001:20::/28"), Reserved}, // ORCHIDv2: identifiers, not locators
	{pfx("2001::/23"), IETFProtocol},
	{pfx("5f00::/16"), Reserved}, // SRv6 SIDs (RFC 9602)
	{pfx("fc00::/7"), Private},
	{pfx("fec0::/10"), Private}, // deprecated site-local
	{pfx("fe80::/10"), LinkLocal},
	{pfx("ff00::/8"), Multicast},
}

var (
	globalUnicast = netip.MustParsePrefix("2000::/3")
	v4Compatible  = netip.MustParsePrefix("::/96")
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	teredo        = netip.MustParsePrefix("2001::/32")
)

func classify(a netip.Addr) verdict {
	if !a.IsValid() {
		return verdict{class: Invalid}
	}
	zoned := a.Zone() != ""
	a = a.WithZone("")
	var v verdict
	if a.Is4() {
		v = verdict{class: classify4(a)}
	} else {
		v = classify6(a)
	}
	if v.class == Public && zoned {
		v = verdict{class: Zoned}
	}
	return v
}

func classify4(a netip.Addr) Class {
	for _, r := range v4Ranges {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	return Public
}

// embedded judges an IPv6 address by the IPv4 address it carries.
func embedded(via string, b []byte) verdict {
	inner := netip.AddrFrom4([4]byte(b))
	if c := classify4(inner); c != Public {
		return verdict{class: c, via: via, inner: inner}
	}
	return verdict{}
}

func classify6(a netip.Addr) verdict {
	b := a.As16()
	switch {
	// Not a.IsLoopback: netip's Is* methods unmap IPv4-mapped addresses
	// first, which would lose the "(IPv4-mapped 127.0.0.1)" in messages.
	case a == netip.IPv6Unspecified():
		return verdict{class: Unspecified}
	case a == netip.IPv6Loopback():
		return verdict{class: Loopback}
	case a.Is4In6():
		return embedded("IPv4-mapped", b[12:16])
	case v4Compatible.Contains(a):
		return embedded("IPv4-compatible", b[12:16])
	case nat64.Contains(a):
		return embedded("NAT64", b[12:16])
	case sixToFour.Contains(a):
		return embedded("6to4", b[2:6])
	case teredo.Contains(a):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		if v := embedded("Teredo client", client[:]); v.class != Public {
			return v
		}
		return embedded("Teredo server", b[4:8])
	}
	for _, r := range v6Ranges {
		if r.prefix.Contains(a) {
			return verdict{class: r.class}
		}
	}
	if !globalUnicast.Contains(a) {
		return verdict{class: Reserved}
	}
	return verdict{}
}
