package hostfuncs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEnv(t *testing.T) {
	t.Parallel()
	grant := &Grant{Env: map[string]string{
		"API_BASE":               "https://api.example.com",
		"EMPTY":                  "",
		"UNICODE":                "héllo\tworld ✓",
		strings.Repeat("N", 256): "long name",
	}}
	tests := []struct {
		name       string
		in         string
		status     Status
		want       string // exact payload
		deniedWant string // the Usage.Denied entry, "" for none
	}{
		{"granted", "API_BASE", StatusOK, "https://api.example.com", ""},
		{"granted empty value", "EMPTY", StatusOK, "", ""},
		{"granted unicode value", "UNICODE", StatusOK, "héllo\tworld ✓", ""},
		{"name of exactly 256 bytes", strings.Repeat("N", 256), StatusOK, "long name", ""},
		{"not granted", "HOME", StatusNotFound, "HOME is not set", "env HOME: not granted"},
		{"case matters", "api_base", StatusNotFound, "api_base is not set", "env api_base: not granted"},
		{"control characters escaped", "A\nB\x1b", StatusNotFound, `A\nB\x1b is not set`, `env A\nB\x1b: not granted`},
		{"invalid UTF-8 escaped", "A\xffB", StatusNotFound, "A\uFFFDB is not set", "env A\uFFFDB: not granted"},
		{"empty name", "", StatusInvalid, "variable name must be 1 to 256 bytes", ""},
		{"name of 257 bytes", strings.Repeat("N", 257), StatusInvalid, "variable name must be 1 to 256 bytes", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := NewCall(grant)
			r := c.env([]byte(tt.in))
			if r.status != tt.status || string(r.payload) != tt.want {
				t.Fatalf("env(%q) = %v %q, want %v %q", tt.in, r.status, r.payload, tt.status, tt.want)
			}
			denied := c.Usage().Denied
			switch {
			case tt.deniedWant == "" && len(denied) != 0:
				t.Errorf("Denied = %q, want none", denied)
			case tt.deniedWant != "" && !slices.Equal(denied, []string{tt.deniedWant}):
				t.Errorf("Denied = %q, want [%q]", denied, tt.deniedWant)
			}
		})
	}
}

func TestEnvNilMapAndNoInheritance(t *testing.T) {
	t.Setenv("SKILLBOX_TEST_HOST_VAR", "host value")
	c := NewCall(&Grant{})
	for _, name := range []string{"SKILLBOX_TEST_HOST_VAR", "PATH", "HOME"} {
		wantReply(t, c.env([]byte(name)), StatusNotFound, name+" is not set")
	}
	if got := len(c.Usage().Denied); got != 3 {
		t.Errorf("Denied has %d entries, want 3", got)
	}
}

func TestEnvDeniedListIsBounded(t *testing.T) {
	t.Parallel()
	c := NewCall(&Grant{})
	for range 250 {
		c.env([]byte("NOPE"))
	}
	if got := len(c.Usage().Denied); got != 100 {
		t.Errorf("Denied has %d entries after 250 refusals, want the cap of 100", got)
	}
}

// What Usage keeps of what a guest named is bounded: entries of Denied in count and length, and
// the hosts, files read and files written in count.
func TestUsageIsBounded(t *testing.T) {
	t.Parallel()
	c := NewCall(&Grant{})
	c.Env(context.Background(), strings.Repeat("N", 300)) // INVALID: not noted
	c.mu.Lock()
	c.note("fetch http://example.com/" + strings.Repeat("é", 4000))
	c.mu.Unlock()
	if d := c.Usage().Denied; len(d) != 1 || len(d[0]) > maxNoteBytes+len(truncationMark) || !utf8.ValidString(d[0]) {
		t.Errorf("Denied entry of %d bytes (valid UTF-8: %v)", len(d[0]), utf8.ValidString(d[0]))
	}
	for i := range 1000 {
		c.contacted(fmt.Sprintf("h%d.example.com:443", i))
		c.update(func(u *tally) { u.FilesRead = appendOnce(u.FilesRead, fmt.Sprintf("/ws/%d", i)) })
	}
	if u := c.Usage(); len(u.HostsContacted) != maxUsageList || len(u.FilesRead) != maxUsageList {
		t.Errorf("%d hosts, %d files read; want %d each", len(u.HostsContacted), len(u.FilesRead), maxUsageList)
	}
}
