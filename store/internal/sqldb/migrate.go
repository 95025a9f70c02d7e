package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// migration is one file of a dialect's migrations.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads the dialect's NNNN_name.sql files, in order; the numbers must run 1, 2, ...
// with no gap, so a missing file is caught here rather than in a database.
func (s *DB) migrations() ([]migration, error) {
	names, err := fs.Glob(s.dialect.Migrations, "*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []migration
	for i, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("migration %s: want the name %04d_<what>.sql", name, i+1)
		}
		b, err := fs.ReadFile(s.dialect.Migrations, name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	return out, nil
}

// migrate brings the schema to the newest migration, all pending ones in one transaction, so a
// failure leaves the database as it was. A database migrated past what this binary knows is
// refused with store.ErrSchemaTooNew.
func (s *DB) migrate(ctx context.Context) error {
	ms, err := s.migrations()
	if err != nil {
		return fmt.Errorf("%s store: %w", s.dialect.Name, err)
	}
	return s.inTx(ctx, "migrate", func(tx *sql.Tx) error {
		if s.dialect.LockMigrations != "" {
			if _, err := tx.ExecContext(ctx, s.dialect.LockMigrations); err != nil {
				return fmt.Errorf("lock: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		if current > len(ms) {
			return fmt.Errorf("%w: it is at schema version %d, this skillbox knows versions up to %d: run a skillbox at least as new as the one that migrated it, or point --data-dir/--database elsewhere",
				store.ErrSchemaTooNew, current, len(ms))
		}
		// The applied ones must be this build's: a database another build migrated (a branch
		// with its own migration 3) would otherwise skip this one's silently.
		rows, err := tx.QueryContext(ctx, `SELECT version, name FROM schema_migrations ORDER BY version`)
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		for rows.Next() {
			var v int
			var name string
			if err := rows.Scan(&v, &name); err != nil {
				rows.Close()
				return fmt.Errorf("read schema_migrations: %w", err)
			}
			if v >= 1 && v <= len(ms) && ms[v-1].name != name {
				rows.Close()
				return fmt.Errorf("%w: its migration %d is %s, this skillbox's is %s: a different build migrated it; point --data-dir/--database elsewhere, or use the build that made it",
					store.ErrSchemaTooNew, v, name, ms[v-1].name)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		for _, m := range ms[current:] {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
				m.version, m.name, time.Now().UnixNano()); err != nil {
				return fmt.Errorf("migration %s: record it: %w", m.name, err)
			}
		}
		return nil
	})
}

// SchemaVersion is the newest migration applied to the database.
func (s *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
