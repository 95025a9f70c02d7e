package version_test

import (
	"slices"
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

// The state machine's table: which statuses each action starts from, where it ends, and the
// least role that may make it. Only an admin approves or rejects new permissions; yanked and
// rejected are final.
func TestTransitions(t *testing.T) {
	want := map[string]version.Transition{
		"approve":   {From: []version.Status{version.Pending}, To: version.Draft, Role: access.RoleAdmin},
		"reject":    {From: []version.Status{version.Pending}, To: version.Rejected, Role: access.RoleAdmin},
		"publish":   {From: []version.Status{version.Draft, version.Deprecated}, To: version.Active, Role: access.RolePublisher},
		"deprecate": {From: []version.Status{version.Active}, To: version.Deprecated, Role: access.RolePublisher},
		"yank":      {From: []version.Status{version.Draft, version.Active, version.Deprecated}, To: version.Yanked, Role: access.RolePublisher},
	}
	if len(version.Transitions) != len(want) {
		t.Errorf("%d transitions, want %d", len(version.Transitions), len(want))
	}
	for action, w := range want {
		got, ok := version.Transitions[action]
		if !ok {
			t.Errorf("no %s transition", action)
			continue
		}
		if got.Action != action || got.To != w.To || got.Role != w.Role {
			t.Errorf("%s: action %q to %s by %s; want to %s by %s", action, got.Action, got.To, got.Role, w.To, w.Role)
		}
		for _, s := range version.Statuses {
			if got.Allows(s) != slices.Contains(w.From, s) {
				t.Errorf("%s from %s: Allows says %v", action, s, got.Allows(s))
			}
		}
	}
	for _, tr := range version.Transitions {
		if !tr.To.Valid() {
			t.Errorf("%s ends in %q, not a status", tr.Action, tr.To)
		}
		if tr.Allows(version.Yanked) || tr.Allows(version.Rejected) {
			t.Errorf("%s moves a version out of a final status", tr.Action)
		}
	}
	if version.Status("published").Valid() || version.Status("").Valid() {
		t.Error("Valid accepts a status that is not one")
	}
}

// A version filed under a tenant's skill id names no user; one filed under a user's own skill
// names the user whose scope it carries, and no other.
func TestOwnedBy(t *testing.T) {
	alice := "notes@" + access.UserScope("alice")
	for _, tc := range []struct {
		name, user string
		want       bool
	}{
		{"notes", "", true},
		{"notes", "alice", false},
		{alice, "alice", true},
		{alice, "bob", false},
		{alice, "", false},
	} {
		if got := version.OwnedBy(tc.name, tc.user); got != tc.want {
			t.Errorf("OwnedBy(%q, %q) = %v, want %v", tc.name, tc.user, got, tc.want)
		}
	}
}
