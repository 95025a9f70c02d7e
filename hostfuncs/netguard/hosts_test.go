package netguard

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustPattern(t *testing.T, s string) Pattern {
	t.Helper()
	p, err := ParsePattern(s)
	if err != nil {
		t.Fatalf("ParsePattern(%q): %v", s, err)
	}
	return p
}

func TestParsePattern(t *testing.T) {
	good := []struct{ in, want string }{
		{"example.com", "example.com"},
		{"Example.COM", "example.com"},
		{"example.com.", "example.com"},
		{"example.com:8443", "example.com:8443"},
		{"example.com:08443", "example.com:8443"},
		{"*.example.com", "*.example.com"},
		{"*.example.com.", "*.example.com"},
		{"*.Example.com:8443", "*.example.com:8443"},
		{"*", "*"},
		{"*:443", "*:443"},
		{"localhost", "localhost"},
		{"_acme.example.com", "_acme.example.com"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"a-b.c0m", "a-b.c0m"},
		{"123.example.com", "123.example.com"},
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1.", "192.0.2.1"},
		{"192.0.2.1:80", "192.0.2.1:80"},
		{"[2001:db8::1]", "[2001:db8::1]"},
		{"[2001:DB8:0::1]:443", "[2001:db8::1]:443"},
		{"[::ffff:192.0.2.1]:80", "192.0.2.1:80"},
		{"example.com:65535", "example.com:65535"},
		{"example.com:1", "example.com:1"},
		{strings.Repeat("a", 63) + ".com", strings.Repeat("a", 63) + ".com"},
	}
	for _, tt := range good {
		p, err := ParsePattern(tt.in)
		if err != nil {
			t.Errorf("ParsePattern(%q): %v", tt.in, err)
			continue
		}
		if got := p.String(); got != tt.want {
			t.Errorf("ParsePattern(%q).String() = %q; want %q", tt.in, got, tt.want)
		}
		if q, err := ParsePattern(p.String()); err != nil || q != p {
			t.Errorf("ParsePattern(%q) does not round-trip: %v, %v", p.String(), q, err)
		}
	}

	bad := []struct{ in, problem string }{
		{"", "empty"},
		{" example.com", "whitespace"},
		{"example.com ", "whitespace"},
		{"exa mple.com", "whitespace"},
		{"example.com\n", "whitespace"},
		{"bücher.example", "non-ASCII"},
		{"https://example.com", "URL"},
		{"https://example.com/path", "URL"},
		{"example.com/path", "path"},
		{"example.com?q", "path"},
		{"user@example.com", "user"},
		{"example..com", "empty label"},
		{".example.com", "empty label"},
		{"example.com..", "empty label"},
		{".", "empty"},
		{"-example.com", "'-'"},
		{"example-.com", "'-'"},
		{"exa$mple.com", "contains"},
		{strings.Repeat("a", 64) + ".com", "longer than 63"},
		{strings.Repeat("a.", 127) + "com", "longer than 253"},
		{"*.", "nothing follows"},
		{"*..com", "empty label"},
		{"**.example.com", `"*"`},
		{"*example.com", `"*"`},
		{"a.*.example.com", `"*"`},
		{"example.*", `"*"`},
		{"*.*.example.com", `"*"`},
		{"*.example.com:*", "port"},
		{"example.com:", "port after ':' is empty"},
		{"example.com:0", "1 to 65535"},
		{"example.com:65536", "1 to 65535"},
		{"example.com:123456", "1 to 65535"},
		{"example.com:-1", "1 to 65535"},
		{"example.com:+80", "1 to 65535"},
		{"example.com:http", "1 to 65535"},
		{":443", "host is empty"},
		{"2001:db8::1", "brackets"},
		{"2001:db8::1:443", "brackets"},
		{"a:b:c", "more than one ':'"},
		{"[2001:db8::1", "no closing ]"},
		{"[2001:db8::1]443", "after ]"},
		{"[2001:db8::1]:", "port after ':' is empty"},
		{"[fe80::1%eth0]", "zone"},
		{"[fe80::1%25eth0]", "zone"},
		{"[192.0.2.1]", "not written in brackets"},
		{"[example.com]", "not an IPv6 address"},
		{"[]", "not an IPv6 address"},
		{"1.2.3", "IPv4"},
		{"256.1.1.1", "IPv4"},
		{"010.0.0.1", "IPv4"},
		{"2130706433", "IPv4"},
		{"*.192.0.2.1", "IPv4"},
	}
	for _, tt := range bad {
		p, err := ParsePattern(tt.in)
		var pe *PatternError
		if !errors.As(err, &pe) {
			t.Errorf("ParsePattern(%q) = %v, %v; want a *PatternError", tt.in, p, err)
			continue
		}
		if p != (Pattern{}) {
			t.Errorf("ParsePattern(%q) returned %v with its error", tt.in, p)
		}
		if pe.Pattern != tt.in || !strings.Contains(pe.Problem, tt.problem) || pe.Hint == "" {
			t.Errorf("ParsePattern(%q) error = %q; want a problem mentioning %q and a hint", tt.in, err, tt.problem)
		}
	}
}

func TestPatternErrorMessage(t *testing.T) {
	_, err := ParsePattern("https://api.example.com/v1")
	want := `invalid host pattern "https://api.example.com/v1": it is a URL, not a host; leave out the scheme and path: write "example.com", not "https://example.com/"`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant  %s", err, want)
	}
	_, err = ParsePattern("2001:db8::1")
	want = `invalid host pattern "2001:db8::1": IPv6 literals must be in brackets; write "[2001:db8::1]", or "[2001:db8::1]:443" for one port`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant  %s", err, want)
	}
}

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern, host, port string
		want                bool
	}{
		{"example.com", "example.com", "443", true},
		{"example.com", "example.com", "80", true},
		{"example.com", "example.com", "", true},
		{"example.com", "EXAMPLE.com", "443", true},
		{"example.com", "example.com.", "443", true},
		{"example.com", "example.com..", "443", false},
		{"example.com", "a.example.com", "443", false},
		{"example.com", "example.org", "443", false},
		{"example.com", "badexample.com", "443", false},
		{"example.com", "exampl\u212a.com", "443", false}, // Kelvin sign does not fold to k
		{"example.com:8443", "example.com", "8443", true},
		{"example.com:8443", "example.com", "08443", true},
		{"example.com:8443", "example.com", "443", false},
		{"example.com:8443", "example.com", "", false},
		{"example.com:8443", "example.com", "x", false},

		{"*.example.com", "a.example.com", "443", true},
		{"*.example.com", "a.b.example.com", "443", true},
		{"*.example.com", "A.Example.COM.", "443", true},
		{"*.example.com", "example.com", "443", false},
		{"*.example.com", ".example.com", "443", false},
		{"*.example.com", "aexample.com", "443", false},
		{"*.example.com", "evil.com/.example.com", "443", false},
		{"*.example.com", "evil.com#.example.com", "443", false},
		{"*.example.com", "a..example.com", "443", false},
		{"*.example.com", "a.example.com.evil.net", "443", false},
		{"*.example.com:8443", "a.example.com", "8443", true},
		{"*.example.com:8443", "a.example.com", "443", false},

		{"*", "anything.at.all", "1", true},
		{"*", "192.0.2.1", "443", true},
		{"*", "", "443", false},
		{"*:443", "example.com", "443", true},
		{"*:443", "example.com", "80", false},

		{"192.0.2.1", "192.0.2.1", "80", true},
		{"192.0.2.1", "::ffff:192.0.2.1", "80", true},
		{"192.0.2.1", "[::ffff:192.0.2.1]", "80", true},
		{"192.0.2.1", "192.0.2.2", "80", false},
		{"192.0.2.1", "192.0.2.1.", "80", false},
		{"192.0.2.1:80", "192.0.2.1", "443", false},
		{"[2001:db8::1]", "2001:db8::1", "443", true},
		{"[2001:db8::1]", "[2001:db8::1]", "443", true},
		{"[2001:db8::1]", "2001:DB8:0:0::1", "443", true},
		{"[2001:db8::1]", "2001:db8::1%eth0", "443", false},
		{"[2001:db8::1]:443", "2001:db8::1", "443", true},
		{"[2001:db8::1]:443", "2001:db8::1", "80", false},
		{"example.com", "[example.com]", "443", false},
		{"example.com", "192.0.2.1", "443", false},
		{"localhost", "2130706433", "80", false},
	}
	for _, tt := range tests {
		p := mustPattern(t, tt.pattern)
		if got := p.Match(tt.host, tt.port); got != tt.want {
			t.Errorf("%q.Match(%q, %q) = %v; want %v", tt.pattern, tt.host, tt.port, got, tt.want)
		}
	}
	if (Pattern{}).Match("example.com", "443") {
		t.Error("zero Pattern matched")
	}
}

func TestPatternCovers(t *testing.T) {
	tests := []struct {
		p, q string
		want bool
	}{
		{"*", "*", true},
		{"*", "example.com", true},
		{"*", "*.example.com:8443", true},
		{"*", "[2001:db8::1]:443", true},
		{"*:443", "example.com:443", true},
		{"*:443", "example.com", false},
		{"*:443", "*", false},
		{"example.com", "*", false},

		{"example.com", "example.com", true},
		{"example.com", "EXAMPLE.com.", true},
		{"example.com", "example.com:8443", true},
		{"example.com:8443", "example.com:8443", true},
		{"example.com:8443", "example.com", false},
		{"example.com:8443", "example.com:443", false},
		{"example.com", "a.example.com", false},
		{"example.com", "*.example.com", false},

		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "*.a.example.com", true},
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "*.example.com:8443", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "aexample.com", false},
		{"*.example.com", "*.aexample.com", false},
		{"*.a.example.com", "*.example.com", false},
		{"*.a.example.com", "b.example.com", false},
		{"*.example.com:8443", "a.example.com:8443", true},
		{"*.example.com:8443", "a.example.com", false},
		{"*.example.com", "192.0.2.1", false},

		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.1:80", true},
		{"192.0.2.1", "[::ffff:192.0.2.1]", true},
		{"192.0.2.1:80", "192.0.2.1", false},
		{"192.0.2.1", "192.0.2.2", false},
		{"[2001:db8::1]", "[2001:db8::1]:443", true},
		{"[2001:db8::1]", "[2001:db8::2]", false},
	}
	for _, tt := range tests {
		p, q := mustPattern(t, tt.p), mustPattern(t, tt.q)
		if got := p.Covers(q); got != tt.want {
			t.Errorf("%q.Covers(%q) = %v; want %v", tt.p, tt.q, got, tt.want)
		}
	}
	ex := mustPattern(t, "example.com")
	if (Pattern{}).Covers(ex) || ex.Covers(Pattern{}) || (Pattern{}).Covers(Pattern{}) {
		t.Error("zero Pattern covers or is covered")
	}
}

func TestList(t *testing.T) {
	var l List
	for _, s := range []string{"api.example.com", "*.cdn.example.net:443", "[2001:db8::1]:8443"} {
		l = append(l, mustPattern(t, s))
	}
	if got, want := l.String(), "api.example.com, *.cdn.example.net:443, [2001:db8::1]:8443"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	matches := []struct {
		host, port string
		want       bool
	}{
		{"api.example.com", "443", true},
		{"img.cdn.example.net", "443", true},
		{"img.cdn.example.net", "80", false},
		{"2001:db8::1", "8443", true},
		{"example.com", "443", false},
	}
	for _, tt := range matches {
		if got := l.Match(tt.host, tt.port); got != tt.want {
			t.Errorf("List.Match(%q, %q) = %v; want %v", tt.host, tt.port, got, tt.want)
		}
	}
	if !l.Covers(mustPattern(t, "a.cdn.example.net:443")) || l.Covers(mustPattern(t, "a.cdn.example.net")) {
		t.Error("List.Covers wrong")
	}
	if List(nil).Match("example.com", "443") || List(nil).String() != "" {
		t.Error("nil List matched or printed something")
	}
}

func TestPatternJSON(t *testing.T) {
	var v struct{ Hosts []Pattern }
	if err := json.Unmarshal([]byte(`{"Hosts": ["Example.com:443", "*.example.org"]}`), &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), `{"Hosts":["example.com:443","*.example.org"]}`; got != want {
		t.Errorf("round trip = %s; want %s", got, want)
	}
	err = json.Unmarshal([]byte(`{"Hosts": ["https://example.com"]}`), &v)
	var pe *PatternError
	if !errors.As(err, &pe) {
		t.Errorf("bad pattern in JSON: err = %v; want a *PatternError", err)
	}
}
