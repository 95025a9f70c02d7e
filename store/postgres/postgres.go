// Package postgres is the store for several replicas sharing one database: PostgreSQL through
// github.com/jackc/pgx/v5 (its database/sql adapter, so the queries are the embedded store's).
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/internal/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the advisory lock key that keeps two replicas from migrating at once.
const migrationLock = 0x736b696c6c626f78 // "skillbox"

// blobsLock is the advisory lock key of the transactions that add or drop blobs (see
// sqldb.Dialect.LockBlobs).
const blobsLock = migrationLock + 1

// versionsLock is the advisory lock key of the transactions that record or move versions (see
// sqldb.Dialect.LockVersions).
const versionsLock = migrationLock + 2

// Open connects to the PostgreSQL database at dsn (postgres://user:pass@host:port/db?... or a
// key=value string), checks it answers, and migrates it.
//
// # Errors
//
// An error wrapping store.ErrSchemaTooNew when a newer Skillbox migrated the database. Errors
// name the database without its password.
func Open(ctx context.Context, dsn string) (store.Store, error) {
	where := redact(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store %s: %w", where, err)
	}
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres store %s: %w", where, err)
	}
	sub, _ := fs.Sub(migrations, "migrations")
	return sqldb.Open(ctx, db, sqldb.Dialect{Name: "postgres", Numbered: true, Migrations: sub,
		LockMigrations: fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", int64(migrationLock)),
		LockBlobs:      fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", int64(blobsLock)),
		LockVersions:   fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", int64(versionsLock)),
		Refuses:        refuses, Pipeline: pipeline,
		NotifyVersions: notifyVersions, Notes: newNotes(cfg)}, where)
}

// pipeline runs stmts on c in one round trip: pgx's batch sends them all with one Sync, so
// PostgreSQL runs them as one implicit transaction (all of them, or none when one fails). Each
// statement is prepared once per connection (pgx's statement cache).
func pipeline(ctx context.Context, c *sql.Conn, stmts []sqldb.Statement) error {
	return c.Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("a connection of %T, not pgx's", dc)
		}
		var b pgx.Batch
		for _, st := range stmts {
			b.Queue(st.SQL, st.Args...)
		}
		return pc.Conn().SendBatch(ctx, &b).Close()
	})
}

// refuses reports whether err is PostgreSQL refusing a statement's data: SQLSTATE class 22
// (data exception: a NUL byte, invalid UTF-8, a value out of range), 23 (integrity constraint
// violation) or 54 (program limit exceeded: a row too large). Connection failures (08), a
// server shutting down or starting (57P), too many connections (53) and the like are not: the
// same write succeeds once the server is back.
func refuses(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) < 2 {
		return false
	}
	switch pe.Code[:2] {
	case "22", "23", "54":
		return true
	}
	return false
}

// redact is dsn without its password, for errors and logs.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		// A key=value string: everything but the password.
		var kept []string
		for _, f := range strings.Fields(dsn) {
			if !strings.HasPrefix(strings.ToLower(f), "password=") {
				kept = append(kept, f)
			}
		}
		return strings.Join(kept, " ")
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
