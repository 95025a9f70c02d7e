package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// A recorder prunes every tenant that has runs by that tenant's own retention: a tenant's
// field it leaves zero is the server's, the default tenant and every tenant without one get the
// server's, each counted apart (so every tenant keeps up to the server's MaxRuns), and a
// tenant listed with no runs costs nothing. More tenants than one page of RunTenants are all
// pruned.
func TestRecorderPrunesEachTenantByItsOwn(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	now := time.Now().UTC()
	seq := 0
	add := func(tenant string, n int, age time.Duration) {
		t.Helper()
		for range n {
			seq++
			at := now.Add(-age).Add(time.Duration(seq) * time.Millisecond)
			r := store.Run{ID: fmt.Sprintf("run_%06d", seq), Skill: "s", Face: "http", Status: store.StatusSucceeded,
				Success: true, StartedAt: at, FinishedAt: at.Add(time.Millisecond)}
			if err := s.Tenant(tenant).FinishRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("", 5, time.Minute)
	add("acme", 6, 2*time.Hour) // its own maxAge of an hour: all go
	add("globex", 6, time.Minute)
	add("initech", 6, time.Minute) // its own maxRuns of 4, the server's age
	const many = 120               // more than one page of tenants
	for i := range many {
		add(fmt.Sprintf("t%03d", i), 3, time.Minute)
	}
	// Recorded before the recorder starts, so its first sweep prunes them; Prune again finds
	// nothing more.
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{
		Retention: store.Retention{MaxRuns: 2, MaxAge: store.Unlimited},
		TenantRetention: map[string]store.Retention{
			"acme":    {MaxRuns: store.Unlimited, MaxAge: time.Hour},
			"initech": {MaxRuns: 4},
			"hooli":   {MaxRuns: 1}, // no runs
		},
	})
	rec.Close() // after its first sweep
	want := map[string]int{"": 2, "acme": 0, "globex": 2, "initech": 4, "hooli": 0}
	for i := range many {
		want[fmt.Sprintf("t%03d", i)] = 2
	}
	for tenant, w := range want {
		p, err := s.Tenant(tenant).ListRuns(ctx, store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Runs) != w {
			t.Errorf("tenant %q keeps %d runs, want %d", tenant, len(p.Runs), w)
		}
	}
	if n, err := rec.Prune(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("a second prune deleted %d runs (%v), want 0: the first sweep did it all", n, err)
	}
}

// The readers of a retention value, for the CLI's flags and the tenants file alike.
func TestParseRetention(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		bad  string // what the error says, "" when there is none
	}{
		{"0", 0, ""}, {"100000", 100000, ""}, {"unlimited", store.Unlimited, ""},
		{"-1", 0, "give a number of runs"}, {"lots", 0, "give a number of runs"}, {"", 0, "give a number of runs"}, {"720h", 0, "give a number of runs"},
	} {
		got, err := store.ParseMaxRuns(c.in)
		if (err == nil) != (c.bad == "") || (err != nil && !strings.Contains(err.Error(), c.bad)) || (err == nil && got != c.want) {
			t.Errorf("ParseMaxRuns(%q) = %d, %v; want %d, %q", c.in, got, err, c.want, c.bad)
		}
	}
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  string
	}{
		{"0", 0, ""}, {"720h", 720 * time.Hour, ""}, {"90d", 90 * 24 * time.Hour, ""}, {"1d12h", 36 * time.Hour, ""},
		{"1m", time.Minute, ""}, {"unlimited", store.Unlimited, ""},
		{"-1h", 0, "give a duration"}, {"soon", 0, "give a duration"}, {"", 0, "give a duration"}, {"100", 0, "give a duration"},
		{"36501d", 0, "give a duration"}, {"10s", 0, "10s is less than 1m0s"},
	} {
		got, err := store.ParseMaxAge(c.in)
		if (err == nil) != (c.bad == "") || (err != nil && !strings.Contains(err.Error(), c.bad)) || (err == nil && got != c.want) {
			t.Errorf("ParseMaxAge(%q) = %v, %v; want %v, %q", c.in, got, err, c.want, c.bad)
		}
	}
	if _, err := store.ParseMaxAge("59s"); !errors.Is(err, store.ErrMaxAgeTooShort) {
		t.Errorf("ParseMaxAge(59s) = %v, want ErrMaxAgeTooShort", err)
	}
}
