package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/pgserver"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/postgres"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// server is the PostgreSQL this test binary started, nil when none is installed.
var (
	server   *pgserver.Server
	startErr error
)

func TestMain(m *testing.M) {
	storetest.ChildMain(postgres.Open)
	server, startErr = pgserver.Start(context.Background())
	code := m.Run()
	if server != nil {
		server.Stop()
	}
	os.Exit(code)
}

// requireServer skips without PostgreSQL, unless SKILLBOX_REQUIRE_TOOLCHAINS=1.
func requireServer(t testing.TB) {
	t.Helper()
	if server != nil {
		return
	}
	if errors.Is(startErr, pgserver.ErrAbsent) && os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS") != "1" {
		t.Skip(startErr)
	}
	t.Fatalf("PostgreSQL: %v", startErr)
}

// newDatabase makes an empty database on the test server (skipping without one, see
// requireServer) and returns its DSN, and opens a store over it, closed when t ends.
func newDatabase(t testing.TB) (string, store.Store) {
	t.Helper()
	requireServer(t)
	dsn, err := server.NewDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return dsn, openStore(t, dsn)
}

// openStore opens a store over dsn, closed when t ends.
func openStore(t testing.TB, dsn string) store.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// adminOf is a plain connection pool to dsn's database, closed when t ends: what a test
// inspects or disturbs the server through, beside the store.
func adminOf(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin
}

func TestConformance(t *testing.T) {
	requireServer(t)
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) string {
			dsn, err := server.NewDatabase(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return dsn
		},
		Open: postgres.Open,
	})
}

// The password of a URL never reaches an error.
func TestErrorsHideThePassword(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=1")
	if err == nil {
		t.Fatal("connecting to port 1 succeeded")
	}
	if msg := fmt.Sprint(err); strings.Contains(msg, "s3cret") {
		t.Fatalf("the error shows the password: %s", msg)
	}
}

// What PostgreSQL refuses for the data (a NUL byte in a text) is store.ErrRefused, which the
// recorder drops; a connection the server ended is not, and the recorder writes it again.
func TestRefusalsAreTold(t *testing.T) {
	ctx := t.Context()
	dsn, s := newDatabase(t)
	now := time.Now()
	bad := store.Run{ID: "run_nul", Skill: "s", Status: store.StatusFailed, StartedAt: now, FinishedAt: now,
		Error: &store.RunError{Kind: "skill_error", Message: "a \x00 b"}}
	if err := s.WriteRuns(ctx, []store.Run{bad}); !errors.Is(err, store.ErrRefused) {
		t.Fatalf("a NUL byte: %v, want ErrRefused", err)
	}
	admin := adminOf(t, dsn)
	if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	good := bad
	good.ID, good.Error = "run_good", &store.RunError{Kind: "skill_error", Message: "fine"}
	if err := s.WriteRuns(ctx, []store.Run{good}); errors.Is(err, store.ErrRefused) {
		t.Fatalf("a connection the server ended: %v, taken for a refusal", err)
	}
}

// A batch is one transaction though it is sent as a pipeline: when its last statement is
// refused, the runs of the statements before it are not kept either, and the batch can be
// written again whole.
func TestPipelinedBatchIsOneTransaction(t *testing.T) {
	ctx := t.Context()
	_, s := newDatabase(t)
	now := time.Now()
	start := store.Run{ID: "run_start", Skill: "s", Status: store.StatusRunning, StartedAt: now}
	bad := store.Run{ID: "run_nul", Skill: "s", Status: store.StatusFailed, StartedAt: now, FinishedAt: now,
		Error: &store.RunError{Kind: "skill_error", Message: "a \x00 b"}}
	// The start is the first statement, the end the second.
	if err := s.WriteRuns(ctx, []store.Run{start, bad}); !errors.Is(err, store.ErrRefused) {
		t.Fatalf("a batch with a NUL byte: %v, want ErrRefused", err)
	}
	if _, err := s.FindRun(ctx, start.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the start of a refused batch: %v, want it not kept (ErrNotFound)", err)
	}
	bad.Error.Message = "a b"
	if err := s.WriteRuns(ctx, []store.Run{start, bad}); err != nil {
		t.Fatalf("the batch written again: %v", err)
	}
	for _, id := range []string{start.ID, bad.ID} {
		if _, err := s.FindRun(ctx, id); err != nil {
			t.Errorf("run %s after the batch: %v", id, err)
		}
	}
}
