package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{
		"example.com", "Example.COM.", "example.com:8443", "*.example.com", "*.example.com:8443",
		"*", "*:443", "192.0.2.1", "192.0.2.1:80", "[2001:db8::1]", "[2001:db8::1]:443",
		"[::ffff:1.2.3.4]", "[fe80::1%eth0]", "https://example.com/", "a..b", "*.", "1.2.3",
		"example.com:0", "example.com:65536", "2001:db8::1", "_x.example.com", "",
	} {
		f.Add(s, "a.example.com", "443")
	}
	f.Fuzz(func(t *testing.T, s, host, port string) {
		p, err := ParsePattern(s)
		if err != nil {
			var pe *PatternError
			if !errors.As(err, &pe) || p != (Pattern{}) || pe.Pattern != s {
				t.Fatalf("ParsePattern(%q) = %v, %v: want the zero Pattern and a *PatternError", s, p, err)
			}
			return
		}
		str := p.String()
		q, err := ParsePattern(str)
		if err != nil || q != p || q.String() != str {
			t.Fatalf("ParsePattern(%q) = %q, which parses to %q, %v", s, str, q.String(), err)
		}
		if !p.Covers(p) {
			t.Fatalf("%q does not cover itself", str)
		}
		if str != strings.ToLower(str) && p.kind != kindIP {
			t.Fatalf("%q is not lowercase", str)
		}
		// Covers must imply Match: whatever q matches, a pattern covering q
		// matches too. Check it against the fuzzed host for a few policies.
		for _, ps := range []string{"*", "*.example.com", "example.com", "*:443"} {
			pol, _ := ParsePattern(ps)
			if pol.Covers(p) && p.Match(host, port) && !pol.Match(host, port) {
				t.Fatalf("%q covers %q, which matches (%q, %q), but does not match it itself", ps, str, host, port)
			}
			if p.Covers(pol) && pol.Match(host, port) && !p.Match(host, port) {
				t.Fatalf("%q covers %q, which matches (%q, %q), but does not match it itself", str, ps, host, port)
			}
		}
		// A name pattern matches its own name on its own port.
		if p.kind == kindHost || p.kind == kindIP {
			h, pt := p.host, "443"
			if p.kind == kindIP {
				h = p.ip.String()
			}
			if p.port != 0 {
				pt = str[strings.LastIndexByte(str, ':')+1:]
			}
			if !p.Match(h, pt) {
				t.Fatalf("%q does not match (%q, %q)", str, h, pt)
			}
		}
	})
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"8.8.8.8", "127.0.0.1", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "64:ff9b::7f00:1",
		"2002:7f00:1::", "2001:0:808:808::80ff:fffe", "fe80::1", "fd00:ec2::254", "::", "::1",
		"2606:4700:4700::1111", "169.254.169.254",
	} {
		b, _ := netip.MustParseAddr(s).MarshalBinary()
		f.Add(b, "")
	}
	f.Add([]byte{0xfe, 0x80, 15: 1}, "eth0")
	f.Fuzz(func(t *testing.T, b []byte, zone string) {
		var a netip.Addr
		switch len(b) {
		case 4:
			a = netip.AddrFrom4([4]byte(b))
		case 16:
			a = netip.AddrFrom16([16]byte(b)).WithZone(zone)
		default:
			a = netip.Addr{}
		}
		c, special := Classify(a)
		if special != (c != Public) {
			t.Fatalf("Classify(%s) = %v, %v", a, c, special)
		}
		err := Guard{}.Check(a)
		if (err == nil) == special {
			t.Fatalf("Classify(%s) = %v but Guard{}.Check = %v", a, c, err)
		}
		if err != nil && (!errors.Is(err, ErrBlocked) || err.Error() == "") {
			t.Fatalf("Check(%s) = %v", a, err)
		}
		// Allowing everything allows everything but invalid and metadata.
		all := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}}
		if err := all.Check(a); (err != nil) != (c == Invalid || c == CloudMetadata) {
			t.Fatalf("everything allowed: Check(%s) [%v] = %v", a, c, err)
		}
		if !a.IsValid() {
			return
		}
		// An IPv4 address and its mapped, NAT64 and 6to4 forms agree.
		if a.Is4() {
			v4 := a.As4()
			for name, form := range map[string][16]byte{
				"mapped": {10: 0xff, 11: 0xff, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
				"nat64":  {1: 0x64, 2: 0xff, 3: 0x9b, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
				"6to4":   {0: 0x20, 1: 0x02, 2: v4[0], 3: v4[1], 4: v4[2], 5: v4[3]},
			} {
				if fc, _ := Classify(netip.AddrFrom16(form)); fc != c {
					t.Fatalf("%s form of %s is %v; the address is %v", name, a, fc, c)
				}
			}
		}
		// Control agrees with Check.
		ap := netip.AddrPortFrom(a, 443)
		if cerr := (Guard{}).Control("tcp", ap.String(), nil); (cerr == nil) != (err == nil) {
			t.Fatalf("Control(%s) = %v; Check = %v", ap, cerr, err)
		}
	})
}
