// Package sqldb is the one implementation of store.Store over database/sql that both drivers
// share: the drivers differ in how they open a connection, their migrations' SQL, their
// placeholders and how they serialise migrations, which [Dialect] says; every query is written
// once, here.
package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillbox-dev/skillbox/internal/diskfull"
	"github.com/skillbox-dev/skillbox/store"
)

// Dialect is what a driver tells DB about its database.
type Dialect struct {
	// Name names the database in errors ("sqlite", "postgres").
	Name string
	// Numbered placeholders ($1, $2) instead of ?.
	Numbered bool
	// Migrations holds the driver's migrations, NNNN_name.sql, applied in order.
	Migrations fs.FS
	// LockMigrations, when set, is run first in the migration transaction so that only one
	// process migrates at a time (PostgreSQL's advisory lock; SQLite's write transaction is
	// already exclusive).
	LockMigrations string
	// LockBlobs, when set, is run in a transaction that adds or drops blobs, so that one that
	// drops a blob nothing holds cannot race one that adds a reference to it, and the artifact
	// quota is checked by one writer at a time (PostgreSQL's advisory lock; SQLite's write
	// transaction is already exclusive).
	LockBlobs string
	// LockVersions, when set, is run first in a transaction that records or moves a version,
	// so that the changes' numbers (version_events.seq) are committed in their order: a reader
	// of the changes after the last it saw must not find an older one appear later
	// (PostgreSQL's advisory lock; SQLite's write transaction is already exclusive).
	LockVersions string
	// File is the database's file, for a database that is one (SQLite): a write's failure is
	// told to be a full disk by its filesystem's free space.
	File string
	// Refuses reports whether a statement's error is the database refusing the data it was
	// given (store.ErrRefused), not failing for its own state.
	Refuses func(error) bool
	// Pipeline, when set, runs stmts on c as one transaction in one round trip: PostgreSQL's
	// pipeline, every statement sent at once and one Sync after them, so the server runs them
	// as one implicit transaction. WriteRuns uses it: a run's start waits for its batch, and
	// BEGIN, two statements and COMMIT are four round trips, each a wait for the database's
	// process to be scheduled on a loaded machine.
	Pipeline func(ctx context.Context, c *sql.Conn, stmts []Statement) error
	// NotifyVersions, when set, is run in every transaction that records or moves a version,
	// after its event: it tells the processes listening that there are changes to read, once the
	// transaction commits (PostgreSQL's pg_notify). Notes, when set, is where they listen:
	// DB.VersionNotes is its Subscribe.
	NotifyVersions string
	Notes          Notes
}

// Notes is a database's listener for the notes NotifyVersions sends (see version.Notifier).
// The store's Close closes it: its subscribers hear nothing more.
type Notes interface {
	Subscribe(ctx context.Context) <-chan struct{}
	Close()
}

// Statement is one statement of a Pipeline: its SQL, in the dialect's placeholders, and its
// arguments.
type Statement struct {
	SQL  string
	Args []any
}

// DB is a store.Store over a *sql.DB: the whole database, or one tenant's part of it (Tenant).
type DB struct {
	*conn
	// tenant is the tenant every run and version this DB reads or writes belongs to: each
	// statement on runs and versions is bound to it, so one tenant's view cannot name another's
	// rows, whatever its caller passes. "" is the default tenant (a server without tenants).
	tenant string
	// view is set on a Tenant view: its Close leaves the database to the DB it came from.
	view bool
}

// conn is the database a DB and its tenant views share.
type conn struct {
	db      *sql.DB
	dialect Dialect
	// where names the database in errors (a path, or a URL without its password).
	where  string
	closed atomic.Bool
	// stmts are the statements of the hot path, prepared once (see prepared).
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	// queries are the hot path's queries in the dialect's placeholders, by query (see numbered).
	queries sync.Map
}

var _ store.Store = (*DB)(nil)

// Open migrates db to the dialect's newest schema and returns the store over it. It takes db
// over: Close closes it. where names the database in errors.
func Open(ctx context.Context, db *sql.DB, d Dialect, where string) (*DB, error) {
	s := &DB{conn: &conn{db: db, dialect: d, where: where}}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Tenant returns the store of one tenant, over the same database: its runs and versions only.
func (s *DB) Tenant(name string) store.Store {
	return &DB{conn: s.conn, tenant: name, view: true}
}

// Close closes the database; a tenant view's Close does nothing (the store it came from owns it).
func (s *DB) Close() error {
	if s.view || s.closed.Swap(true) {
		return nil
	}
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	if s.dialect.Notes != nil {
		s.dialect.Notes.Close()
	}
	return s.db.Close()
}

// prepared returns query (in the dialect's placeholders) prepared once for the database, for
// the statements every run writes: parsing them anew for each cost a run as much as running
// them. database/sql prepares it again on each connection it is used on, once.
func (s *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st := s.stmts[query]; st != nil {
		return st, nil
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	st, err := s.db.PrepareContext(ctx, s.q(query))
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[query] = st
	return st, nil
}

// SQL returns the underlying database, for tests.
func (s *DB) SQL() *sql.DB { return s.db }

// q is query in the dialect's placeholders.
func (s *DB) q(query string) string {
	if !s.dialect.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// numbered is q(query), made once per query: for the statements every run writes.
func (s *DB) numbered(query string) string {
	if q, ok := s.queries.Load(query); ok {
		return q.(string)
	}
	q := s.q(query)
	s.queries.Store(query, q)
	return q
}

// check fails with store.ErrClosed after Close.
func (s *DB) check() error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// named is err, of a write, named a full disk when it is one: SQLite says only "disk I/O error"
// when its file's filesystem is full; the database's path (Dialect.File) tells.
func (s *DB) named(err error) error {
	if err != nil && s.dialect.Refuses != nil && s.dialect.Refuses(err) {
		return fmt.Errorf("%w: %w", store.ErrRefused, err)
	}
	return diskfull.NameAt(err, s.where, s.dialect.File)
}

// inTx runs fn in one transaction, committed when fn returns nil.
func (s *DB) inTx(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	if err := s.check(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %s %s: begin: %w", what, s.dialect.Name, s.where, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return s.named(fmt.Errorf("%s: %s %s: %w", what, s.dialect.Name, s.where, err))
	}
	if err := tx.Commit(); err != nil {
		return s.named(fmt.Errorf("%s: %s %s: commit: %w", what, s.dialect.Name, s.where, err))
	}
	return nil
}
