package netguard

import (
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr string
		want Class
	}{
		// Public, for contrast.
		{"8.8.8.8", Public},
		{"1.1.1.1", Public},
		{"100.63.255.255", Public},  // just below CGNAT
		{"100.128.0.0", Public},     // just above CGNAT
		{"172.15.255.255", Public},  // just below 172.16/12
		{"172.32.0.0", Public},      // just above 172.16/12
		{"192.0.1.1", Public},       // between 192.0.0/24 and 192.0.2/24
		{"198.17.255.255", Public},  // below 198.18/15
		{"198.20.0.0", Public},      // above 198.18/15
		{"223.255.255.255", Public}, // below multicast
		{"2606:4700:4700::1111", Public},
		{"2001:4860:4860::8888", Public},

		// IPv4 special ranges.
		{"0.0.0.0", Unspecified},
		{"0.1.2.3", ThisNetwork},
		{"0.255.255.255", ThisNetwork},
		{"127.0.0.1", Loopback},
		{"127.255.255.254", Loopback},
		{"10.0.0.1", Private},
		{"10.255.255.255", Private},
		{"172.16.0.1", Private},
		{"172.31.255.255", Private},
		{"192.168.1.1", Private},
		{"100.64.0.1", SharedAddressSpace},
		{"100.127.255.255", SharedAddressSpace},
		{"169.254.0.1", LinkLocal},
		{"169.254.170.2", LinkLocal}, // ECS task metadata: link-local anyway
		{"169.254.169.254", CloudMetadata},
		{"100.100.100.200", CloudMetadata},
		{"224.0.0.1", Multicast},
		{"239.255.255.250", Multicast},
		{"255.255.255.255", Broadcast},
		{"240.0.0.1", Reserved},
		{"255.255.255.254", Reserved},
		{"198.18.0.1", Benchmarking},
		{"198.19.255.255", Benchmarking},
		{"192.0.0.1", IETFProtocol},
		{"192.0.0.170", IETFProtocol},
		{"192.0.2.1", Documentation},
		{"198.51.100.7", Documentation},
		{"203.0.113.9", Documentation},

		// IPv6 special ranges.
		{"::", Unspecified},
		{"::1", Loopback},
		{"fc00::1", Private},
		{"fd12:3456::1", Private},
		{"fec0::1", Private},
		{"fe80::1", LinkLocal},
		{"febf::1", LinkLocal},
		{"fd00:ec2::254", CloudMetadata},
		{"fd00:ec2::253", Private},
		{"ff02::1", Multicast},
		{"ff05::1:3", Multicast},
		{"2001:db8::1", Documentation},
		{"3fff::1", Documentation},
		{"2001:2::1", Benchmarking},
		{"2001:10::1", Reserved},
		{"2001:20::1", Reserved},
		{"2001:100::1", IETFProtocol},
		{"5f00::1", Reserved},
		{"100::1", Reserved},           // discard-only
		{"4000::1", Reserved},          // outside 2000::/3
		{"::ffff:0:1.2.3.4", Reserved}, // SIIT IPv4-translated: outside 2000::/3
		{"64:ff9b:1::808:808", LocalNAT64},
		{"64:ff9b:1:ffff::1", LocalNAT64},

		// IPv4-mapped: judged by the IPv4 address.
		{"::ffff:8.8.8.8", Public},
		{"::ffff:127.0.0.1", Loopback},
		{"::ffff:10.1.2.3", Private},
		{"::ffff:169.254.169.254", CloudMetadata},
		{"::ffff:0.0.0.0", Unspecified},
		{"::ffff:255.255.255.255", Broadcast},
		{"::ffff:7f00:1", Loopback}, // same as ::ffff:127.0.0.1, hex spelling

		// IPv4-compatible (deprecated).
		{"::8.8.8.8", Public},
		{"::127.0.0.1", Loopback},
		{"::192.168.0.1", Private},
		{"::2", ThisNetwork}, // ::0.0.0.2

		// NAT64 well-known prefix.
		{"64:ff9b::8.8.8.8", Public},
		{"64:ff9b::808:808", Public},
		{"64:ff9b::127.0.0.1", Loopback},
		{"64:ff9b::a9fe:a9fe", CloudMetadata},
		{"64:ff9b::10.0.0.1", Private},

		// 6to4: IPv4 address in bits 16-47.
		{"2002:808:808::1", Public},
		{"2002:7f00:1::1", Loopback},
		{"2002:a00:1::", Private},
		{"2002:a9fe:a9fe::1", CloudMetadata},
		{"2002:c000:201::1", Documentation},

		// Teredo: server in bits 32-63, client = last 32 bits XOR 0xffffffff.
		// 8.8.8.8 ^ 0xffffffff = f7f7:f7f7; 127.0.0.1 ^ ... = 80ff:fffe.
		{"2001:0:808:808:0:0:f7f7:f7f7", Public},
		{"2001:0:808:808::80ff:fffe", Loopback},
		{"2001:0:808:808::f5ff:fffe", Private},       // client 10.0.0.1
		{"2001:0:7f00:1::f7f7:f7f7", Loopback},       // server 127.0.0.1
		{"2001:0:808:808::5601:5601", CloudMetadata}, // client 169.254.169.254
		{"2001:0:808:808::7f00:1", Public},           // not inverted: client is 128.255.255.254

		// Zones.
		{"fe80::1%eth0", LinkLocal},
		{"2606:4700:4700::1111%eth0", Zoned},
		{"::1%lo", Loopback},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		got, special := Classify(a)
		if got != tt.want || special != (tt.want != Public) {
			t.Errorf("Classify(%s) = %v, %v; want %v, %v", tt.addr, got, special, tt.want, tt.want != Public)
		}
	}
}

func TestClassifyInvalid(t *testing.T) {
	if c, special := Classify(netip.Addr{}); c != Invalid || !special {
		t.Errorf("Classify(zero) = %v, %v; want invalid, true", c, special)
	}
}

func TestClassString(t *testing.T) {
	for c := Public; c <= Zoned; c++ {
		if c.String() == "" || c.is() == "" || c.plural() == "" {
			t.Errorf("class %d has no text", c)
		}
	}
	if got := Class(200).String(); got != "Class(200)" {
		t.Errorf("Class(200).String() = %q", got)
	}
	if got := CloudMetadata.String(); got != "cloud-metadata" {
		t.Errorf("CloudMetadata.String() = %q", got)
	}
}

// The embedded forms must agree with the IPv4 table for every class, so a
// range added to v4Ranges is automatically covered in its IPv6 disguises.
func TestEmbeddedAgreesWithIPv4(t *testing.T) {
	var addrs []netip.Addr
	for _, r := range v4Ranges {
		addrs = append(addrs, r.prefix.Addr(), lastAddr(r.prefix))
	}
	addrs = append(addrs, netip.MustParseAddr("8.8.8.8"))
	for _, ip := range addrs {
		want := classify4(ip)
		v4 := ip.As4()
		forms := map[string]netip.Addr{
			"mapped": netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]}),
			"nat64":  netip.AddrFrom16([16]byte{0: 0x00, 1: 0x64, 2: 0xff, 3: 0x9b, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]}),
			"6to4":   netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: v4[0], 3: v4[1], 4: v4[2], 5: v4[3], 15: 1}),
			"teredo": netip.AddrFrom16([16]byte{0: 0x20, 1: 0x01, 4: 8, 5: 8, 6: 8, 7: 8, 12: ^v4[0], 13: ^v4[1], 14: ^v4[2], 15: ^v4[3]}),
		}
		for name, a := range forms {
			if got, _ := Classify(a); got != want {
				t.Errorf("%s form %s of %s: got %v, want %v", name, a, ip, got, want)
			}
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	for i := p.Bits(); i < 32; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(b)
}
