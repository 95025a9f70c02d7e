package cluster

import (
	"context"
	"fmt"
	"testing"

	"github.com/skillbox-dev/skillbox/runtime"
)

// A Node is what a runtime shares its installs through.
var _ runtime.Installs = (*Node)(nil)

// What one node announces, another finds and follows: the notes held when it starts, then
// each new one in order, a removal as an empty digest; a tenant follows its own notes only, and
// a name that could widen a subject is refused.
func TestInstallsReachEveryNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	const d1, d2 = "sha256:" + "11111111", "sha256:" + "22222222"
	if _, found, err := b.InstalledDigest(ctx, "", "", "greeter"); err != nil || found {
		t.Fatalf("a skill never installed: found %v, %v", found, err)
	}
	r1, err := a.AnnounceInstall(ctx, "", "", "greeter", d1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AnnounceInstall(ctx, "acme", "", "other", d1); err != nil {
		t.Fatal(err)
	}
	if d, found, err := b.InstalledDigest(ctx, "", "", "greeter"); err != nil || !found || d != d1 {
		t.Fatalf("installed: %q %v %v", d, found, err)
	}
	notes := make(chan string, 8)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- b.FollowInstalls(fctx, "", func(scope, skill, digest string, rev uint64) {
			notes <- fmt.Sprintf("%s/%s=%s@%d", scope, skill, digest, rev)
		})
	}()
	want := func(w string) {
		t.Helper()
		select {
		case got := <-notes:
			if got != w {
				t.Fatalf("note %q, want %q", got, w)
			}
		case <-ctx.Done():
			t.Fatalf("no note; want %q", w)
		}
	}
	want(fmt.Sprintf("/greeter=%s@%d", d1, r1))
	r2, err := a.AnnounceInstall(ctx, "", "0123456789abcdef", "mine", d2)
	if err != nil {
		t.Fatal(err)
	}
	want(fmt.Sprintf("0123456789abcdef/mine=%s@%d", d2, r2))
	r3, err := a.AnnounceInstall(ctx, "", "", "greeter", "")
	if err != nil {
		t.Fatal(err)
	}
	want(fmt.Sprintf("/greeter=@%d", r3))
	stop()
	if err := <-done; err == nil {
		t.Fatal("FollowInstalls ended without an error")
	}
	select {
	case n := <-notes:
		t.Fatalf("a note of another tenant: %s", n)
	default:
	}
	for _, bad := range [][3]string{{"", "", "a.*"}, {"", "*", "greeter"}, {"x.>", "", "greeter"}, {"", "", ""}} {
		if _, err := a.AnnounceInstall(ctx, bad[0], bad[1], bad[2], d1); err == nil {
			t.Errorf("announce of %q was taken", bad)
		}
	}
	if _, err := a.AnnounceInstall(ctx, "", "", "greeter", string(make([]byte, maxDigest+1))); err == nil {
		t.Error("an announce past the digest's bound was taken")
	}
}
