package storetest

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/version"
)

// testDigest is a well-formed digest made from s.
func testDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func newVersion(skill, seed string, at time.Time) version.Version {
	return version.Version{Skill: skill, Digest: testDigest(seed), Version: "1.0.0", Status: version.Draft, Source: "upload",
		Grant: &policy.Grant{Network: []string{"api.example.com"}, Env: []string{}, Secrets: []string{}, Files: []policy.GrantedMount{},
			Limits: spec.Limits{TimeoutMs: 1000}}, CreatedBy: "alice", CreatedAt: at}
}

// Files come back byte for byte; a blob two versions share is stored once; versions and their
// status survive a restart.
func testVersionFiles(t *testing.T, h Harness) {
	addr := h.New(t)
	s := open(t, h, addr)
	ctx := t.Context()
	shared := []byte("shared module bytes \x00\xff")
	a := map[string][]byte{"skill.json": []byte(`{"id":"w"}`), "execute.wasm": shared, "resources/deep/x.txt": {}, "bin": {0, 1, 2, 255}}
	b := map[string][]byte{"skill.json": []byte(`{"id":"w","v":2}`), "execute.wasm": shared}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	va, created, err := s.AddVersion(ctx, newVersion("w", "a", t0), a)
	if err != nil || !created || va.Status != version.Draft || va.Grant == nil || va.Grant.Network[0] != "api.example.com" {
		t.Fatalf("add a: %+v %v %v", va, created, err)
	}
	vb := newVersion("w", "b", t0.Add(time.Second))
	vb.Status, vb.Diff = version.Pending, []string{"network: + evil.test"}
	if _, _, err := s.AddVersion(ctx, vb, b); err != nil {
		t.Fatal(err)
	}
	got, err := s.VersionFiles(ctx, "w", va.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(a) {
		t.Fatalf("files: %d, want %d", len(got), len(a))
	}
	for p, data := range a {
		if string(got[p]) != string(data) {
			t.Fatalf("file %s: %q, want %q", p, got[p], data)
		}
	}
	if raw, ok := s.(interface{ SQL() *sql.DB }); ok {
		var n int
		if err := raw.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM blobs`).Scan(&n); err != nil || n != 5 {
			t.Fatalf("blobs: %d (%v), want 5 (the shared module once)", n, err)
		}
	}
	s.Close()
	s = open(t, h, addr)
	list, err := s.Versions(ctx, "w")
	if err != nil || len(list) != 2 || list[0].Digest != vb.Digest || list[0].Status != version.Pending || list[0].Diff[0] != "network: + evil.test" || !list[1].CreatedAt.Equal(t0) {
		t.Fatalf("after a restart: %+v %v", list, err)
	}
	if _, err := s.Version(ctx, "w", testDigest("none")); !errors.Is(err, version.ErrNotFound) {
		t.Fatalf("a missing version: %v", err)
	}
	if _, err := s.VersionFiles(ctx, "other", va.Digest); !errors.Is(err, version.ErrNotFound) {
		t.Fatalf("files of another skill's digest: %v", err)
	}
}

// Many stores add the same version at once: it is created once, and all see the same row.
func testVersionsConcurrentAdd(t *testing.T, h Harness) {
	addr := h.New(t)
	open(t, h, addr) // migrate once, before the race
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	createdCount := 0
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			s, err := h.Open(t.Context(), addr)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			v := newVersion("w", "same", time.Unix(int64(1_700_000_000+i), 0))
			got, created, err := s.AddVersion(t.Context(), v, map[string][]byte{"skill.json": []byte("x")})
			if err != nil {
				errs <- err
				return
			}
			if got.Digest != v.Digest {
				errs <- fmt.Errorf("got %s", got.Digest)
			}
			mu.Lock()
			if created {
				createdCount++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if createdCount != 1 {
		t.Fatalf("created %d times, want 1", createdCount)
	}
}

// Every transition moves only from its statuses; publish deprecates the previous active one.
func testVersionTransitions(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	files := map[string][]byte{"skill.json": []byte("x")}
	all := []version.Status{version.Draft, version.Pending, version.Active, version.Deprecated, version.Yanked, version.Rejected}
	at := time.Unix(1_700_000_000, 0).UTC()
	for name, tr := range version.Transitions {
		for _, from := range all {
			// A version in status from: made so directly (the store takes any valid status).
			v := newVersion("s-"+name, name+string(from), at)
			v.Status = from
			if from == version.Active {
				v.Skill = "a-" + name + "-" + string(from) // its own skill: one active per skill
			}
			if _, _, err := s.AddVersion(ctx, v, files); err != nil {
				t.Fatal(err)
			}
			got, err := s.SetVersionStatus(ctx, v.Skill, v.Digest, tr, "bob", "why", at.Add(time.Minute))
			if tr.Allows(from) {
				if err != nil || got.Status != tr.To || got.UpdatedBy != "bob" || got.Note != "why" || !got.UpdatedAt.Equal(at.Add(time.Minute)) {
					t.Fatalf("%s from %s: %+v %v", name, from, got, err)
				}
			} else if !errors.Is(err, version.ErrConflict) || !strings.Contains(err.Error(), "it is "+string(from)) {
				t.Fatalf("%s from %s: %v, want a conflict naming the status", name, from, err)
			}
		}
	}
	if _, err := s.SetVersionStatus(ctx, "w", testDigest("none"), version.Transitions["publish"], "bob", "", at); !errors.Is(err, version.ErrNotFound) {
		t.Fatalf("a missing version: %v", err)
	}
	// Publish moves the active version aside.
	v1, v2 := newVersion("p", "1", at), newVersion("p", "2", at.Add(time.Second))
	for _, v := range []version.Version{v1, v2} {
		if _, _, err := s.AddVersion(ctx, v, files); err != nil {
			t.Fatal(err)
		}
	}
	pub := version.Transitions["publish"]
	if _, err := s.SetVersionStatus(ctx, "p", v1.Digest, pub, "bob", "", at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetVersionStatus(ctx, "p", v2.Digest, pub, "bob", "", at); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Version(ctx, "p", v1.Digest); v.Status != version.Deprecated {
		t.Fatalf("the first after the second publish: %s", v.Status)
	}
}

// Two drafts of one skill published at once from two stores: never two active versions.
func testVersionsConcurrentPublish(t *testing.T, h Harness) {
	addr := h.New(t)
	s := open(t, h, addr)
	ctx := t.Context()
	for round := range 10 {
		skill := fmt.Sprintf("race-%d", round)
		var digests []string
		for i := range 2 {
			v := newVersion(skill, fmt.Sprint(round, i), time.Unix(int64(1_700_000_000+i), 0))
			if _, _, err := s.AddVersion(ctx, v, map[string][]byte{"skill.json": []byte("x")}); err != nil {
				t.Fatal(err)
			}
			digests = append(digests, v.Digest)
		}
		var wg sync.WaitGroup
		for _, d := range digests {
			wg.Go(func() {
				o, err := h.Open(ctx, addr)
				if err != nil {
					t.Error(err)
					return
				}
				defer o.Close()
				if _, err := o.SetVersionStatus(ctx, skill, d, version.Transitions["publish"], "bob", "", time.Now()); err != nil && !errors.Is(err, version.ErrConflict) {
					t.Errorf("publish: %v", err)
				}
			})
		}
		wg.Wait()
		list, err := s.Versions(ctx, skill)
		if err != nil {
			t.Fatal(err)
		}
		active := 0
		for _, v := range list {
			if v.Status == version.Active {
				active++
			}
		}
		if active != 1 {
			t.Fatalf("round %d: %d active versions: %+v", round, active, list)
		}
	}
}

// A blob changed behind the store's back is refused, naming the file.
func testVersionTampered(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	raw, ok := s.(interface{ SQL() *sql.DB })
	if !ok {
		t.Skip("the driver does not expose its *sql.DB")
	}
	ctx := t.Context()
	v := newVersion("w", "t", time.Unix(1_700_000_000, 0))
	if _, _, err := s.AddVersion(ctx, v, map[string][]byte{"execute.wasm": []byte("good")}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.SQL().ExecContext(ctx, `UPDATE blobs SET data = 'evil'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VersionFiles(ctx, "w", v.Digest); err == nil || !strings.Contains(err.Error(), "execute.wasm does not match") {
		t.Fatalf("a tampered blob: %v", err)
	}
}

// What a caller hands AddVersion is checked, and the error names the field.
func testVersionValidation(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ok := map[string][]byte{"skill.json": []byte("x")}
	base := newVersion("w", "v", time.Unix(1_700_000_000, 0))
	cases := []struct {
		name  string
		edit  func(v *version.Version)
		files map[string][]byte
		want  string
	}{
		{"skill", func(v *version.Version) { v.Skill = "../x" }, ok, "is not a skill id"},
		{"digest", func(v *version.Version) { v.Digest = "sha256:XYZ" }, ok, "digest"},
		{"status", func(v *version.Version) { v.Status = "live" }, ok, "status"},
		{"no files", func(v *version.Version) {}, map[string][]byte{}, "no files"},
		{"absolute", func(v *version.Version) {}, map[string][]byte{"/etc/passwd": nil}, "not a clean relative"},
		{"dotdot", func(v *version.Version) {}, map[string][]byte{"../x": nil}, "not a clean relative"},
		{"unclean", func(v *version.Version) {}, map[string][]byte{"a//b": nil}, "not a clean relative"},
		{"too large", func(v *version.Version) {}, map[string][]byte{"a": make([]byte, 300<<20), "b": make([]byte, 300<<20)}, "more than"},
	}
	for _, c := range cases {
		v := base
		c.edit(&v)
		if _, _, err := s.AddVersion(t.Context(), v, c.files); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	if list, _ := s.Versions(t.Context(), "w"); len(list) != 0 {
		t.Fatalf("refused versions were stored: %+v", list)
	}
}
