package pgserver

import (
	"context"
	"errors"
	"os"
	"testing"
)

// Run as root, the server runs as another user, who must reach its directory: a private TMPDIR
// (mode 0700, as mktemp -d makes it) is no obstacle.
func TestAPrivateTempDirIsNoObstacle(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the server runs as this user: any TMPDIR it can write will do")
	}
	if _, err := BinDir(); errors.Is(err, ErrAbsent) {
		t.Skip("no PostgreSQL here")
	}
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", private)
	s, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
}
