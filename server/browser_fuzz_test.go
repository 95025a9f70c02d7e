package server

import (
	"net/url"
	"testing"
)

// FuzzParseOrigin: an origin an operator configures is refused, or normalised to a bare
// scheme://host[:port] that parses back to itself.
func FuzzParseOrigin(f *testing.F) {
	for _, s := range []string{"https://app.example.com", "http://localhost:3000", "*", "null", "https://a.example/path",
		"HTTPS://A.EXAMPLE:443", "http://[::1]:8080", "ftp://x", "https://user@x", "https://x?y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, o string) {
		got, err := ParseOrigin(o)
		if err != nil {
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			t.Fatalf("ParseOrigin(%q) = %q, not a bare origin", o, got)
		}
		if again, err := ParseOrigin(got); err != nil || again != got {
			t.Fatalf("ParseOrigin(%q) = %q, but it normalises again to %q, %v", o, got, again, err)
		}
	})
}
