// Package sqlite is the embedded store: one SQLite file that needs nothing installed.
//
// # Why github.com/ncruces/go-sqlite3
//
// It is SQLite itself, compiled to WebAssembly and translated to Go by wasm2go: no cgo (the
// binary still cross-compiles with CGO_ENABLED=0), and the real SQLite's file format, locking
// and WAL, so several processes can share one file. modernc.org/sqlite is pure Go too, but a
// C-to-Go translation that brings its own libc emulation (modernc.org/libc and friends) into the
// build; ncruces needs only golang.org/x/sys beside Go. Since v0.33 it no longer runs SQLite on
// wazero, so it neither shares nor constrains the wazero version the runtime uses.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3" with database/sql

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/internal/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the store's file in a data directory.
const FileName = "skillbox.db"

// Open opens (creating it when missing) the SQLite store at path and migrates it. Its directory
// is created with mode 0700 when missing: run records name callers and may hold arguments.
//
// The database runs in WAL mode (readers never wait for the writer) with synchronous=NORMAL: a
// committed record survives the process being killed, though not necessarily a power cut
// within the last moments. Writers wait for each other up to 10 s (busy_timeout) and take the
// write lock when their transaction begins (BEGIN IMMEDIATE), so concurrent writers, in one
// process or several, queue instead of failing with "database is locked".
//
// # Errors
//
// An error wrapping store.ErrSchemaTooNew when a newer Skillbox migrated the file.
func Open(ctx context.Context, path string) (store.Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_pragma=foreign_keys(on)"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	sub, _ := fs.Sub(migrations, "migrations")
	s, err := sqldb.Open(ctx, db, sqldb.Dialect{Name: "sqlite", Migrations: sub, File: path, Refuses: refuses}, path)
	if err != nil {
		return nil, err
	}
	// The file is created by the first connection: keep it the owner's alone.
	_ = os.Chmod(path, 0o600)
	return s, nil
}

// refuses reports whether err is SQLite refusing a statement's data: a constraint, a value of
// the wrong type, too large, or out of range. Busy, locked, I/O errors and a full disk are not.
func refuses(err error) bool {
	for _, code := range []sqlite3.ErrorCode{sqlite3.CONSTRAINT, sqlite3.MISMATCH, sqlite3.TOOBIG, sqlite3.RANGE} {
		if errors.Is(err, code) {
			return true
		}
	}
	return false
}
