package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Pattern is one entry of a host allow-list, as written in a manifest or a
// policy:
//
//	example.com            that host, any port
//	example.com:8443       that host, port 8443 only
//	*.example.com          any subdomain of example.com (not example.com itself)
//	*.example.com:8443     the same, port 8443 only
//	*                      any host ("*:443": any host, port 443)
//	192.0.2.1, 192.0.2.1:80
//	[2001:db8::1], [2001:db8::1]:443
//
// Names are ASCII and case-insensitive: internationalized names are written in
// their punycode (xn--) form, which is what goes on the wire. The zero Pattern
// matches and covers nothing. Patterns are comparable with ==; equal patterns
// print the same.
type Pattern struct {
	kind patternKind
	host string     // kindHost: the name; kindWildcard: the suffix after "*."
	ip   netip.Addr // kindIP; IPv4-mapped addresses are stored as IPv4
	port uint16     // 0: any port
}

type patternKind uint8

const (
	kindNone patternKind = iota
	kindAny
	kindHost
	kindWildcard
	kindIP
)

// PatternError reports a malformed pattern: what is wrong with it, and how to
// write what was probably meant.
type PatternError struct {
	Pattern string // the input, as given
	Problem string
	Hint    string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("invalid host pattern %q: %s; %s", e.Pattern, e.Problem, e.Hint)
}

const patternForms = `write a host such as "example.com", "example.com:8443", "*.example.com", "192.0.2.1", "[2001:db8::1]:443" or "*"`

// ParsePattern parses and validates one pattern. Names are lowercased and a
// trailing dot is dropped, so String returns the canonical form.
//
// It refuses, with a *PatternError saying why: empty input, whitespace and
// control characters, non-ASCII, URLs (a scheme, a path, a query, user
// information), empty labels ("a..b"), labels that are too long or start or
// end with "-", a "*" anywhere but as the whole leftmost label, IPv6 literals
// without brackets or with a zone, bracketed IPv4 literals, names whose last
// label is numeric (a mistyped IPv4 address such as "1.2.3" or "010.0.0.1"),
// and ports that are empty, not decimal, or outside 1-65535.
func ParsePattern(s string) (Pattern, error) {
	fail := func(problem, hint string) (Pattern, error) {
		return Pattern{}, &PatternError{Pattern: s, Problem: problem, Hint: hint}
	}
	if s == "" {
		return fail("it is empty", patternForms)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c == 0x7f:
			return fail("it contains whitespace or a control character", "write one pattern per entry, with nothing around it")
		case c >= 0x80:
			return fail("it contains non-ASCII characters", `write internationalized names in punycode, such as "xn--bcher-kva.example" for "bücher.example"`)
		}
	}
	if i := strings.Index(s, "://"); i >= 0 {
		return fail("it is a URL, not a host", `leave out the scheme and path: write "example.com", not "https://example.com/"`)
	}
	if strings.ContainsAny(s, "/?#") {
		return fail("it contains a path, query or fragment", `a pattern names a host and optionally a port, such as "example.com:8443"`)
	}
	if strings.Contains(s, "@") {
		return fail("it contains user information", `a pattern names a host, such as "example.com", without "user@"`)
	}

	var p Pattern
	host, port, hasPort := s, "", false
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return fail("the opening [ has no closing ]", `write IPv6 literals as "[2001:db8::1]" or "[2001:db8::1]:443"`)
		}
		lit, rest := s[1:end], s[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return fail(fmt.Sprintf("unexpected %q after ]", rest), `only a port may follow an IPv6 literal, as in "[2001:db8::1]:443"`)
			}
			port, hasPort = rest[1:], true
		}
		a, err := netip.ParseAddr(lit)
		switch {
		case err != nil && strings.Contains(lit, "%"):
			return fail("the IPv6 literal has a zone", `zones ("%eth0") are not allowed; write the address alone, such as "[fe80::1]"`)
		case err != nil:
			return fail(fmt.Sprintf("%q is not an IPv6 address", lit), `write IPv6 literals as "[2001:db8::1]"`)
		case a.Is4():
			return fail("IPv4 literals are not written in brackets", fmt.Sprintf("write %q", lit+rest))
		case a.Zone() != "":
			return fail("the IPv6 literal has a zone", fmt.Sprintf(`zones are not allowed; write "[%s]"`, a.WithZone("")))
		}
		p = Pattern{kind: kindIP, ip: a.Unmap()}
	} else {
		switch strings.Count(s, ":") {
		case 0:
		case 1:
			i := strings.IndexByte(s, ':')
			host, port, hasPort = s[:i], s[i+1:], true
		default:
			if a, err := netip.ParseAddr(s); err == nil && a.Is6() {
				return fail("IPv6 literals must be in brackets", fmt.Sprintf(`write "[%s]", or "[%s]:443" for one port`, s, s))
			}
			return fail("it has more than one ':'", `write "host:port" with one port, or an IPv6 literal in brackets such as "[2001:db8::1]:443"`)
		}
		var problem, hint string
		p, problem, hint = parseHost(asciiLower(host))
		if problem != "" {
			return fail(problem, hint)
		}
	}
	if hasPort {
		n, ok := parsePort(port)
		if !ok {
			if port == "" {
				return fail("the port after ':' is empty", `write a port such as "example.com:8443", or leave out the ':' to allow any port`)
			}
			return fail(fmt.Sprintf("port %q is not a number from 1 to 65535", port), `write a decimal port such as "example.com:8443", or leave it out to allow any port`)
		}
		p.port = n
	}
	return p, nil
}

// parseHost parses the host part of a pattern that is not bracketed. host is
// already lowercase. On failure it returns a problem and a hint.
func parseHost(host string) (p Pattern, problem, hint string) {
	switch {
	case host == "":
		return p, "the host is empty", patternForms
	case host == "*":
		return Pattern{kind: kindAny}, "", ""
	}
	kind := kindHost
	if strings.HasPrefix(host, "*.") {
		kind, host = kindWildcard, host[2:]
	}
	if strings.Contains(host, "*") {
		return p, `"*" may only stand alone or be the whole leftmost label`, `write "*.example.com" for every subdomain of example.com, or "*" for any host`
	}
	host = strings.TrimSuffix(host, ".")
	if kind == kindHost {
		if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
			return Pattern{kind: kindIP, ip: a}, "", ""
		}
	}
	if problem, hint := checkName(host); problem != "" {
		if kind == kindWildcard && host == "" {
			return p, `nothing follows "*."`, `write "*.example.com" for every subdomain of example.com, or "*" for any host`
		}
		return p, problem, hint
	}
	return Pattern{kind: kind, host: host}, "", ""
}

// checkName validates a lowercase DNS name without a trailing dot: labels of
// 1 to 63 letters, digits, '-' and '_' (which real names do contain), not
// starting or ending with '-', at most 253 bytes in all, and a last label that
// is not all digits (such a name is a malformed IPv4 address, which resolvers
// disagree about).
func checkName(name string) (problem, hint string) {
	const nameHint = `write a DNS name such as "api.example.com"`
	if name == "" {
		return "the host is empty", patternForms
	}
	if len(name) > 253 {
		return "the name is longer than 253 characters", nameHint
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		switch {
		case l == "":
			return "it has an empty label (a leading dot or \"..\")", nameHint
		case len(l) > 63:
			return fmt.Sprintf("label %q is longer than 63 characters", l), nameHint
		case l[0] == '-' || l[len(l)-1] == '-':
			return fmt.Sprintf("label %q starts or ends with '-'", l), nameHint
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Sprintf("label %q contains %q", l, c), "names may contain only letters, digits, '-' and '_'"
			}
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" {
		return "it looks like an IPv4 address but is not one", `write four decimal numbers from 0 to 255 without leading zeros, such as "192.0.2.1"`
	}
	return "", ""
}

// parsePort accepts 1 to 5 decimal digits with a value from 1 to 65535.
func parsePort(s string) (uint16, bool) {
	if len(s) == 0 || len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// asciiLower lowercases ASCII letters only. strings.ToLower would also fold
// characters such as the Kelvin sign (U+212A) to 'k', letting a non-ASCII host
// compare equal to an ASCII pattern.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + ('a' - 'A')
				}
			}
			return string(b)
		}
	}
	return s
}

// Match reports whether a request to host and port is allowed by p.
//
// host is a URL's host without the port (url.URL.Hostname; brackets around an
// IPv6 literal are accepted too). It is compared case-insensitively with one
// trailing dot ignored; a host that is not a valid name or IP literal never
// matches a name pattern, so odd characters cannot sneak past a suffix
// comparison. An IPv6 literal with a zone never matches an address pattern.
// An IPv4-mapped literal matches its IPv4 pattern.
//
// port is the effective decimal port: the caller fills in 80 or 443 when the
// URL has none. A pattern without a port matches any port; a pattern with one
// never matches an empty port.
func (p Pattern) Match(host, port string) bool {
	if p.kind == kindNone || host == "" {
		return false
	}
	if p.port != 0 {
		if n, ok := parsePort(port); !ok || n != p.port {
			return false
		}
	}
	if p.kind == kindAny {
		return true
	}
	bracketed := len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']'
	if bracketed {
		host = host[1 : len(host)-1]
	}
	if p.kind == kindIP || bracketed {
		a, err := netip.ParseAddr(host)
		return p.kind == kindIP && err == nil && a.Zone() == "" && a.Unmap() == p.ip
	}
	host = strings.TrimSuffix(asciiLower(host), ".")
	if problem, _ := checkName(host); problem != "" {
		return false
	}
	if p.kind == kindWildcard {
		return len(host) > len(p.host)+1 && strings.HasSuffix(host, "."+p.host)
	}
	return host == p.host
}

// Covers reports whether p, a policy's pattern, grants everything q, a
// manifest's pattern, asks for: every host and port q matches, p matches too.
// "*" covers everything; "*.example.com" covers "a.example.com" and
// "*.a.example.com" (and itself) but not "example.com"; a pattern without a
// port covers every port of what it covers, and one with a port only patterns
// with that same port. Equal patterns cover each other. The zero Pattern
// covers nothing and is covered by nothing.
func (p Pattern) Covers(q Pattern) bool {
	if p.kind == kindNone || q.kind == kindNone {
		return false
	}
	if p.port != 0 && p.port != q.port {
		return false
	}
	switch p.kind {
	case kindAny:
		return true
	case kindWildcard:
		switch q.kind {
		case kindWildcard:
			return q.host == p.host || strings.HasSuffix(q.host, "."+p.host)
		case kindHost:
			return strings.HasSuffix(q.host, "."+p.host)
		}
	case kindHost:
		return q.kind == kindHost && q.host == p.host
	case kindIP:
		return q.kind == kindIP && q.ip == p.ip
	}
	return false
}

// String returns the canonical form of p, which ParsePattern parses back to
// p. The zero Pattern prints as "".
func (p Pattern) String() string {
	var s string
	switch p.kind {
	case kindNone:
		return ""
	case kindAny:
		s = "*"
	case kindHost:
		s = p.host
	case kindWildcard:
		s = "*." + p.host
	case kindIP:
		s = p.ip.String()
		if p.ip.Is6() {
			s = "[" + s + "]"
		}
	}
	if p.port != 0 {
		s += ":" + strconv.Itoa(int(p.port))
	}
	return s
}

// MarshalText returns String, so patterns can sit in JSON and YAML documents.
func (p Pattern) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses text with ParsePattern.
func (p *Pattern) UnmarshalText(text []byte) error {
	q, err := ParsePattern(string(text))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// List is a host allow-list: a request is allowed if any pattern matches it.
// The nil List allows nothing.
type List []Pattern

// Match reports whether any pattern in l matches host and port (see
// Pattern.Match).
func (l List) Match(host, port string) bool {
	for _, p := range l {
		if p.Match(host, port) {
			return true
		}
	}
	return false
}

// Covers reports whether some pattern in l covers q (see Pattern.Covers): the
// check that a policy grants what a manifest asks for. A q that is covered
// only by several patterns together (say "example.com:80" and
// "example.com:443" for "example.com") is not covered.
func (l List) Covers(q Pattern) bool {
	for _, p := range l {
		if p.Covers(q) {
			return true
		}
	}
	return false
}

// String returns the patterns separated by ", ".
func (l List) String() string {
	s := make([]string, len(l))
	for i, p := range l {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
