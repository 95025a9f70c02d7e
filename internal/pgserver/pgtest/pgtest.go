// Package pgtest starts a throwaway PostgreSQL for a test: the one rule for when such a test
// skips (no server binaries here) and when it fails (CI, which installs them and sets
// SKILLBOX_REQUIRE_TOOLCHAINS=1).
package pgtest

import (
	"errors"
	"os"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/pgserver"
)

// Start starts a PostgreSQL for tb, stopped when tb ends. Without PostgreSQL's binaries tb is
// skipped, unless SKILLBOX_REQUIRE_TOOLCHAINS=1, when it fails.
func Start(tb testing.TB) *pgserver.Server {
	tb.Helper()
	srv, err := pgserver.Start(tb.Context())
	if errors.Is(err, pgserver.ErrAbsent) && os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS") != "1" {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Stop)
	return srv
}
