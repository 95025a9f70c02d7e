package version_test

import (
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/version"
)

func TestWidening(t *testing.T) {
	base := &policy.Grant{Network: []string{"*.example.com"}, Env: []string{"A"}, Files: []policy.GrantedMount{{Path: "/data", Access: spec.ReadOnly}},
		Limits: spec.Limits{TimeoutMs: 1000, MemoryMiB: 64}}
	next := &policy.Grant{Network: []string{"api.example.com", "evil.test"}, Env: []string{"A", "B"}, Secrets: []string{"TOKEN"},
		Files: []policy.GrantedMount{{Path: "/data", Access: spec.ReadWrite}, {Path: "/out", Access: spec.ReadWrite}}, Limits: spec.Limits{TimeoutMs: 500, MemoryMiB: 128}}
	got := strings.Join(version.Widening(base, next), "; ")
	want := "network: + evil.test; env: + B; secrets: + TOKEN; files: /data read-only -> read-write; files: + /out (read-write); limits.memoryMiB: 64 -> 128"
	if got != want {
		t.Fatalf("Widening:\n got %s\nwant %s", got, want)
	}
	if w := version.Widening(next, next); len(w) != 0 {
		t.Fatalf("a grant widens itself: %v", w)
	}
}

func TestValidVersionSkill(t *testing.T) {
	for name, want := range map[string]bool{
		"notes": true, "notes@" + access.UserScope("a"): true, "notes@": false, "notes@ABCDEF0123456789": false,
		"notes@0123": false, "@" + access.UserScope("a"): false, "Notes@" + access.UserScope("a"): false, "a/b": false,
	} {
		if version.ValidSkill(name) != want {
			t.Errorf("ValidVersionSkill(%q) = %v", name, !want)
		}
	}
}
