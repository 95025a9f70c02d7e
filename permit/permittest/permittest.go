// Package permittest is the conformance test every permit.Store passes: the in-memory one and
// each database's (store/storetest runs it against SQLite and PostgreSQL).
package permittest

import (
	"errors"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/permit"
)

// Run checks what a permit.Store from open does: a permit covers its skill's version, its
// target and its caller (every caller when it has none) from its start until it ends; the one
// that lasts longest is found; revoking ends it; the list holds the ones in force.
func Run(t *testing.T, open func(t *testing.T) permit.Store) {
	ctx := t.Context()
	s := open(t)
	now := time.Unix(1_800_000_000, 0).UTC()
	base := permit.Permit{Skill: "pr-review", Digest: "sha256:aa", Caller: "ann", Kind: "network", Target: "api.github.com",
		At: now, Until: now.Add(time.Hour), By: "root", RunID: "run_000000000000000000000001", RequestID: "preq_0000000000000001"}
	p1 := base
	p1.ID = permit.NewID()
	if err := s.AddPermit(ctx, p1); err != nil {
		t.Fatal(err)
	}
	q := permit.Query{Skill: "pr-review", Digest: "sha256:aa", Caller: "ann", Kind: "network", Target: "api.github.com", At: now.Add(time.Minute)}
	got, err := s.FindPermit(ctx, q)
	if err != nil || got != p1 {
		t.Fatalf("find: %+v, %v; want %+v", got, err, p1)
	}
	for name, change := range map[string]func(*permit.Query){
		"another caller":  func(q *permit.Query) { q.Caller = "bob" },
		"another version": func(q *permit.Query) { q.Digest = "sha256:bb" },
		"another skill":   func(q *permit.Query) { q.Skill = "other" },
		"another target":  func(q *permit.Query) { q.Target = "evil.example" },
		"another kind":    func(q *permit.Query) { q.Kind = "env" },
		"another access":  func(q *permit.Query) { q.Access = "read-write" },
		"after its end":   func(q *permit.Query) { q.At = now.Add(time.Hour) },
		"before it began": func(q *permit.Query) { q.At = now.Add(-time.Second) },
	} {
		o := q
		change(&o)
		if got, err := s.FindPermit(ctx, o); !errors.Is(err, permit.ErrNotFound) {
			t.Errorf("%s: found %+v, %v; want permit.ErrNotFound", name, got, err)
		}
	}
	// A permit for every caller covers bob; the longest-lasting covering permit is found.
	p2 := base
	p2.ID, p2.Caller, p2.Until = permit.NewID(), "", now.Add(2*time.Hour)
	if err := s.AddPermit(ctx, p2); err != nil {
		t.Fatal(err)
	}
	for _, caller := range []string{"ann", "bob"} {
		o := q
		o.Caller = caller
		if got, err := s.FindPermit(ctx, o); err != nil || got.ID != p2.ID {
			t.Errorf("%s: found %+v, %v; want the tenant's permit %s", caller, got, err, p2.ID)
		}
	}
	list, err := s.ListPermits(ctx, now.Add(time.Minute), 10)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v, %v; want both", list, err)
	}
	if err := s.RevokePermit(ctx, p2.ID, "root", now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokePermit(ctx, p2.ID, "root", now.Add(3*time.Minute)); !errors.Is(err, permit.ErrNotFound) {
		t.Errorf("revoking a revoked permit: %v, want permit.ErrNotFound", err)
	}
	if err := s.RevokePermit(ctx, "pmt_0000000000000000", "root", now); !errors.Is(err, permit.ErrNotFound) {
		t.Errorf("revoking no permit: %v, want permit.ErrNotFound", err)
	}
	o := q
	o.Caller, o.At = "bob", now.Add(3*time.Minute)
	if got, err := s.FindPermit(ctx, o); !errors.Is(err, permit.ErrNotFound) {
		t.Errorf("after the revocation bob finds %+v, %v", got, err)
	}
	list, err = s.ListPermits(ctx, now.Add(3*time.Minute), 10)
	if err != nil || len(list) != 1 || list[0].ID != p1.ID {
		t.Errorf("list after the revocation: %+v, %v; want ann's alone", list, err)
	}
}
