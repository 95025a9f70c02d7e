package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/permit"
	"github.com/skillbox-dev/skillbox/permit/permittest"
)

// A store keeps permits as permit.Store says, each tenant's apart, and after a restart.
func testPermits(t *testing.T, h Harness) {
	permittest.Run(t, func(t *testing.T) permit.Store { return open(t, h, h.New(t)) })

	addr := h.New(t)
	root := open(t, h, addr)
	now := time.Unix(1_800_000_000, 0).UTC()
	p := permit.Permit{ID: permit.NewID(), Skill: "s", Digest: "sha256:aa", Kind: "env", Target: "TOKEN", At: now, Until: now.Add(time.Hour), By: "root"}
	if err := root.Tenant("acme").AddPermit(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	q := permit.Query{Skill: "s", Digest: "sha256:aa", Caller: "ann", Kind: "env", Target: "TOKEN", At: now}
	for name, s := range map[string]permit.Store{"the default tenant": root, "globex": root.Tenant("globex")} {
		if got, err := s.FindPermit(t.Context(), q); !errors.Is(err, permit.ErrNotFound) {
			t.Errorf("%s finds acme's permit: %+v, %v", name, got, err)
		}
		if err := s.RevokePermit(t.Context(), p.ID, "eve", now); !errors.Is(err, permit.ErrNotFound) {
			t.Errorf("%s revokes acme's permit: %v", name, err)
		}
	}
	root.Close()
	again := open(t, h, addr)
	if got, err := again.Tenant("acme").FindPermit(t.Context(), q); err != nil || got != p {
		t.Errorf("after a restart: %+v, %v; want %+v", got, err, p)
	}
}
