// Package storetest is the conformance suite every store.Store driver passes: the same tests,
// run against SQLite and a real PostgreSQL.
//
// A driver's test calls [Run] with a [Harness], and its TestMain calls [ChildMain] first: the
// interrupted-run test runs the test binary again as a child process that records a run start
// and is then killed with SIGKILL.
package storetest

import (
	"context"
	"testing"

	"github.com/skillbox-dev/skillbox/store"
)

// Harness is how the suite makes stores of one driver.
type Harness struct {
	// New returns the address of a fresh, empty store (a file path, a DSN) for t.
	New func(t *testing.T) string
	// Open opens the store at addr; the suite closes it. It is called more than once per
	// address, and from the child process.
	Open func(ctx context.Context, addr string) (store.Store, error)
}

// Run runs every conformance test against h.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"RoundTrip", testRoundTrip},
		{"NothingHalfWritten", testNothingHalfWritten},
		{"WriteRunsBatch", testWriteRunsBatch},
		{"RestartSurvival", testRestartSurvival},
		{"Migrations", testMigrations},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ListNewestFirst", testListNewestFirst},
		{"ListFiltersAndCursor", testListFilters},
		{"BadQueries", testBadQueries},
		{"Retention", testRetention},
		{"TenantRetention", testTenantRetention},
		{"LeaseSweep", testLeaseSweep},
		{"InterruptRun", testInterruptRun},
		{"QueuedRuns", testQueuedRuns},
		{"CancelQueuedRun", testCancelQueuedRun},
		{"KilledProcessInterrupted", testKilledProcess},
		{"Closed", testClosed},
		{"VersionFiles", testVersionFiles},
		{"VersionsConcurrentAdd", testVersionsConcurrentAdd},
		{"VersionTransitions", testVersionTransitions},
		{"VersionsConcurrentPublish", testVersionsConcurrentPublish},
		{"VersionTampered", testVersionTampered},
		{"VersionValidation", testVersionValidation},
		{"TenantIsolation", testTenantIsolation},
		{"Visibility", testVisibility},
		{"FindVersions", testFindVersions},
		{"VersionChangesAndEvents", testVersionChanges},
		{"ArtifactsRoundTrip", testArtifactsRoundTrip},
		{"ArtifactsQuota", testArtifactsQuota},
		{"ArtifactsPruned", testArtifactsPruned},
		{"Permits", testPermits},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

// open opens the store at addr, closed when t ends.
func open(t *testing.T, h Harness, addr string) store.Store {
	t.Helper()
	s, err := h.Open(t.Context(), addr)
	if err != nil {
		t.Fatalf("open %s: %v", addr, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
