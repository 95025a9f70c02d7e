package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/pgserver"
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
func requireServer(t *testing.T) {
	t.Helper()
	if server != nil {
		return
	}
	if errors.Is(startErr, pgserver.ErrAbsent) && os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS") != "1" {
		t.Skip(startErr)
	}
	t.Fatalf("PostgreSQL: %v", startErr)
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
