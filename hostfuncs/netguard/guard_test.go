package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func TestGuardCheck(t *testing.T) {
	tests := []struct {
		allow []string
		addr  string
		want  Class // Public: allowed
	}{
		{nil, "8.8.8.8", Public},
		{nil, "::ffff:8.8.8.8", Public},
		{nil, "10.0.0.1", Private},
		{nil, "127.0.0.1", Loopback},
		{nil, "::ffff:127.0.0.1", Loopback},
		{nil, "169.254.169.254", CloudMetadata},

		{[]string{"127.0.0.1/32"}, "127.0.0.1", Public},
		{[]string{"127.0.0.1/32"}, "::ffff:127.0.0.1", Public}, // mapped form of an allowed address
		{[]string{"127.0.0.1/32"}, "127.0.0.2", Loopback},
		{[]string{"127.0.0.1/32"}, "::1", Loopback},
		{[]string{"127.0.0.1/32"}, "64:ff9b::127.0.0.1", Loopback}, // NAT64 is not the same host
		{[]string{"::1/128"}, "::1", Public},
		{[]string{"10.0.0.0/8"}, "10.9.8.7", Public},
		{[]string{"10.0.0.0/8"}, "192.168.0.1", Private},
		{[]string{"10.0.0.0/8", "192.168.0.0/16"}, "192.168.0.1", Public},
		{[]string{"fe80::/10"}, "fe80::1%eth0", Public}, // zone ignored when matching Allow
		{[]string{"2606:4700::/32"}, "2606:4700:4700::1111%eth0", Public},

		// Metadata needs an exact entry.
		{[]string{"169.254.0.0/16"}, "169.254.169.254", CloudMetadata},
		{[]string{"169.254.0.0/16"}, "169.254.1.1", Public},
		{[]string{"0.0.0.0/0"}, "169.254.169.254", CloudMetadata},
		{[]string{"0.0.0.0/0"}, "100.100.100.200", CloudMetadata},
		{[]string{"169.254.169.254/32"}, "169.254.169.254", Public},
		{[]string{"169.254.169.254/32"}, "::ffff:169.254.169.254", Public},
		{[]string{"fd00::/8"}, "fd00:ec2::254", CloudMetadata},
		{[]string{"fd00:ec2::254/128"}, "fd00:ec2::254", Public},

		{[]string{}, "10.0.0.1", Private}, // empty, non-nil Allow
	}
	for _, tt := range tests {
		g := Guard{Allow: prefixes(tt.allow...)}
		err := g.Check(netip.MustParseAddr(tt.addr))
		if tt.want == Public {
			if err != nil {
				t.Errorf("Allow %v: Check(%s) = %v; want nil", tt.allow, tt.addr, err)
			}
			continue
		}
		var be *BlockedError
		if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) {
			t.Errorf("Allow %v: Check(%s) = %v; want a *BlockedError", tt.allow, tt.addr, err)
			continue
		}
		if be.Class != tt.want || be.Addr != netip.MustParseAddr(tt.addr) {
			t.Errorf("Allow %v: Check(%s) blocked %s as %v; want %v", tt.allow, tt.addr, be.Addr, be.Class, tt.want)
		}
	}
}

func TestGuardZeroPrefixIgnored(t *testing.T) {
	g := Guard{Allow: []netip.Prefix{{}}}
	if err := g.Check(netip.MustParseAddr("10.0.0.1")); !errors.Is(err, ErrBlocked) {
		t.Errorf("zero prefix in Allow: Check = %v; want blocked", err)
	}
	if err := (Guard{Allow: prefixes("0.0.0.0/0", "::/0")}).Check(netip.Addr{}); !errors.Is(err, ErrBlocked) {
		t.Errorf("Check(invalid) with everything allowed = %v; want blocked", err)
	}
}

func TestBlockedErrorMessage(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"10.0.0.1", "address 10.0.0.1 is private; the policy does not allow private networks"},
		{"::ffff:127.0.0.1", "address ::ffff:127.0.0.1 is loopback (IPv4-mapped 127.0.0.1); the policy does not allow loopback addresses"},
		{"2002:a9fe:a9fe::1", "address 2002:a9fe:a9fe::1 is a cloud metadata endpoint (6to4 169.254.169.254); the policy does not allow cloud metadata endpoints unless the exact address is allowed"},
		{"fe80::1%eth0", "address fe80::1%eth0 is link-local; the policy does not allow link-local addresses"},
	}
	for _, tt := range tests {
		err := Guard{}.Check(netip.MustParseAddr(tt.addr))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Check(%s) = %v\nwant %s", tt.addr, err, tt.want)
		}
	}
}

func TestControlParsesAddress(t *testing.T) {
	var g Guard
	tests := []struct {
		network, address string
		ok               bool
	}{
		{"tcp", "8.8.8.8:443", true},
		{"tcp4", "8.8.8.8:443", true},
		{"tcp6", "[2001:4860:4860::8888]:443", true},
		{"udp", "1.1.1.1:53", true},
		{"tcp", "127.0.0.1:80", false},
		{"tcp6", "[fe80::1%eth0]:80", false},
		{"tcp", "example.com:80", false}, // not resolved: cannot be checked
		{"tcp", "8.8.8.8", false},        // no port
		{"unix", "/tmp/sock", false},
		{"ip4:icmp", "8.8.8.8", false},
	}
	for _, tt := range tests {
		err := g.Control(tt.network, tt.address, nil)
		if (err == nil) != tt.ok {
			t.Errorf("Control(%q, %q) = %v; want ok=%v", tt.network, tt.address, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Errorf("Control(%q, %q) = %v; does not match ErrBlocked", tt.network, tt.address, err)
		}
	}
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}

// TestControlWithRealDialer dials a real listener through net.Dialer.Control:
// the check runs on the resolved address at connect time.
func TestControlWithRealDialer(t *testing.T) {
	ln := listen(t, "127.0.0.1:0")
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t.Run("refused by default", func(t *testing.T) {
		d := &net.Dialer{Control: Guard{}.Control}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			t.Fatal("dial to loopback succeeded; want refused")
		}
		var be *BlockedError
		if !errors.Is(err, ErrBlocked) || !errors.As(err, &be) || be.Class != Loopback {
			t.Fatalf("dial error = %v (%T); want a loopback *BlockedError", err, err)
		}
		t.Logf("error: %v", err)
	})
	t.Run("allowed with Allow 127.0.0.1/32", func(t *testing.T) {
		d := &net.Dialer{Control: Guard{Allow: prefixes("127.0.0.1/32")}.Control}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		c.Close()
	})
	t.Run("name resolved then checked", func(t *testing.T) {
		// "localhost" is not an address; the dialer resolves it and Control
		// sees 127.0.0.1 (or ::1).
		d := &net.Dialer{Control: Guard{}.Control}
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("localhost", port))
		if err == nil {
			c.Close()
			t.Fatal("dial to localhost succeeded; want refused")
		}
		if !errors.Is(err, ErrBlocked) {
			t.Fatalf("dial error = %v; want ErrBlocked", err)
		}
	})
	t.Run("DialContext", func(t *testing.T) {
		dial := Guard{}.DialContext(nil)
		if c, err := dial(ctx, "tcp", addr); !errors.Is(err, ErrBlocked) {
			if c != nil {
				c.Close()
			}
			t.Fatalf("DialContext(nil) dial = %v; want ErrBlocked", err)
		}
		dial = Guard{Allow: prefixes("127.0.0.1/32")}.DialContext(&net.Dialer{Timeout: 5 * time.Second})
		c, err := dial(ctx, "tcp", addr)
		if err != nil {
			t.Fatalf("allowed dial: %v", err)
		}
		c.Close()
	})
}

func TestDialContextChainsControl(t *testing.T) {
	ln := listen(t, "127.0.0.1:0")
	addr := ln.Addr().String()
	ctx := context.Background()
	allow := Guard{Allow: prefixes("127.0.0.1/32")}
	hookErr := errors.New("hook refused")

	var called int
	d := &net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		called++
		return hookErr
	}}
	if _, err := allow.DialContext(d)(ctx, "tcp", addr); !errors.Is(err, hookErr) || called != 1 {
		t.Fatalf("with Control: err = %v, called = %d; want the hook's error once", err, called)
	}
	if _, err := (Guard{}).DialContext(d)(ctx, "tcp", addr); !errors.Is(err, ErrBlocked) || called != 1 {
		t.Fatalf("guard refusal: err = %v, called = %d; want ErrBlocked before the hook runs", err, called)
	}
	d = &net.Dialer{ControlContext: func(ctx context.Context, network, address string, c syscall.RawConn) error {
		called++
		return hookErr
	}}
	if _, err := allow.DialContext(d)(ctx, "tcp", addr); !errors.Is(err, hookErr) || called != 2 {
		t.Fatalf("with ControlContext: err = %v, called = %d; want the hook's error", err, called)
	}
	if d.Control != nil || d.ControlContext == nil {
		t.Fatal("DialContext modified the caller's Dialer")
	}
}

func TestDialContextCopiesAllow(t *testing.T) {
	ln := listen(t, "127.0.0.1:0")
	g := Guard{Allow: prefixes("10.0.0.0/8")}
	dial := g.DialContext(nil)
	g.Allow[0] = netip.MustParsePrefix("127.0.0.0/8")
	if _, err := dial(context.Background(), "tcp", ln.Addr().String()); !errors.Is(err, ErrBlocked) {
		t.Fatalf("dial = %v; want ErrBlocked (Allow changed after DialContext must not count)", err)
	}
}

// TestHTTPRedirect shows why the check belongs at dial time: a server the
// policy allows redirects to one it does not, and the second connection is
// refused.
func TestHTTPRedirect(t *testing.T) {
	inner := listen(t, "127.0.0.2:0") // Linux routes all of 127/8 to lo
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			io.WriteString(w, "ok")
			return
		}
		http.Redirect(w, r, "http://"+inner.Addr().String()+"/", http.StatusFound)
	}))
	defer outer.Close()

	client := &http.Client{Transport: &http.Transport{
		Proxy:       nil,
		DialContext: Guard{Allow: prefixes("127.0.0.1/32")}.DialContext(&net.Dialer{Timeout: 5 * time.Second}),
	}}
	resp, err := client.Get(outer.URL + "/ok")
	if err != nil {
		t.Fatalf("GET allowed server: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Fatalf("body = %q", body)
	}

	resp, err = client.Get(outer.URL + "/redirect")
	if err == nil {
		resp.Body.Close()
		t.Fatal("redirect to 127.0.0.2 was followed; want refused")
	}
	var be *BlockedError
	if !errors.Is(err, ErrBlocked) || !errors.As(err, &be) || be.Addr != netip.MustParseAddr("127.0.0.2") {
		t.Fatalf("redirect error = %v; want a *BlockedError for 127.0.0.2", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.2 is loopback") {
		t.Errorf("error %q does not say why", err)
	}
}
