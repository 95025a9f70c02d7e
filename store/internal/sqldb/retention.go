package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// The statements of PruneRuns, each bound to one tenant: they seek the index that leads with
// the tenant (runs_tenant_newest), so pruning a tenant reads its own runs only, however many
// other tenants have.
const (
	// pruneOlder is the condition on runs that a run is one of the tenant's finished runs
	// started before a time.
	pruneOlder = `tenant = ? AND status NOT IN ('running', 'queued') AND started_at < ?`
	// pruneLastKept finds the oldest of the tenant's newest MaxRuns finished runs.
	pruneLastKept = `SELECT started_at, id FROM runs WHERE tenant = ? AND status NOT IN ('running', 'queued')
		ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET ?`
	// pruneBeyond is the condition on runs that a run is one of the tenant's finished runs
	// older than a kept one (by start, then id). A row value, as ListRuns's cursor: with
	// "started_at < ? OR (...)" PostgreSQL may answer the first half from the index of every
	// tenant's runs (runs_newest) and read them all.
	pruneBeyond = `tenant = ? AND status NOT IN ('running', 'queued') AND (started_at, id) < (?, ?)`
	// runTenants walks the distinct tenants of runs one index seek at a time (a loose index
	// scan: SELECT DISTINCT would read every run), at most limit of them.
	runTenants = `WITH RECURSIVE t (name, n) AS (
			SELECT (SELECT MIN(tenant) FROM runs WHERE tenant > ?), 1
			UNION ALL
			SELECT (SELECT MIN(tenant) FROM runs WHERE tenant > t.name), t.n + 1 FROM t WHERE t.name IS NOT NULL AND t.n < ?)
		SELECT name FROM t WHERE name IS NOT NULL`
)

// PruneRuns deletes s's tenant's finished runs older than keep.MaxAge and those past its
// newest keep.MaxRuns, with their artifacts, and the blobs those held that nothing else holds,
// in one transaction: no sweep is needed, and a reader never sees an artifact without its
// bytes. Every statement is bound to the tenant: another tenant's runs are neither deleted nor
// counted, so a busy tenant cannot push a quiet one's runs out.
func (s *DB) PruneRuns(ctx context.Context, keep store.Retention, now time.Time) (int, error) {
	keep = keep.WithDefaults()
	var n int64
	err := s.inTx(ctx, s.pruneWhat(), func(tx *sql.Tx) error {
		if keep.MaxAge > 0 {
			d, err := s.pruneWhere(ctx, tx, pruneOlder, s.tenant, now.Add(-keep.MaxAge).UnixNano())
			if err != nil {
				return err
			}
			n += d
		}
		if keep.MaxRuns > 0 {
			// The newest MaxRuns finished runs stay: find the last of them, delete what is older.
			var t int64
			var id string
			err := tx.QueryRowContext(ctx, s.q(pruneLastKept), s.tenant, keep.MaxRuns-1).Scan(&t, &id)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			} else if err != nil {
				return err
			}
			d, err := s.pruneWhere(ctx, tx, pruneBeyond, s.tenant, t, id)
			if err != nil {
				return err
			}
			n += d
		}
		return nil
	})
	return int(n), err
}

// pruneWhat names a prune in errors: the tenant's, when it is not the default one.
func (s *DB) pruneWhat() string {
	if s.tenant == "" {
		return "prune runs"
	}
	return fmt.Sprintf("prune the runs of tenant %q", s.tenant)
}

// pruneWhere deletes, in tx, the runs that match where (a condition on runs whose first
// argument is s's tenant) with their artifacts, and says how many runs.
func (s *DB) pruneWhere(ctx context.Context, tx *sql.Tx, where string, args ...any) (int64, error) {
	if err := s.dropArtifacts(ctx, tx, where, args...); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, s.q(`DELETE FROM runs WHERE `+where), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RunTenants lists the tenants after after (other than the default, "") that have runs, in
// byte order, at most limit: every tenant's, from any tenant's store, as SweepRuns does.
func (s *DB) RunTenants(ctx context.Context, after string, limit int) ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if limit < 1 || limit > store.MaxLimit {
		return nil, fmt.Errorf("%w: list the tenants of runs: limit %d: ask for 1 to %d", store.ErrBadQuery, limit, store.MaxLimit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(runTenants), after, limit)
	if err != nil {
		return nil, fmt.Errorf("list the tenants of runs: %s %s: %w", s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("list the tenants of runs: %s %s: %w", s.dialect.Name, s.where, err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the tenants of runs: %s %s: %w", s.dialect.Name, s.where, err)
	}
	return names, nil
}
