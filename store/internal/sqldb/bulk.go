package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/version"
)

// bulkRows is how many runs one INSERT of InsertRuns writes: 18 columns each stays far below
// the placeholders either database takes in one statement (SQLite 32766, PostgreSQL 65535).
const bulkRows = 500

// InsertRuns writes runs whole, as they are, in one transaction of multi-row inserts. It is the
// fast path of the tests and benchmarks that fill a history (a million runs in a minute, where
// a transaction per run would take an hour), not part of store.Store: a runtime's runs go
// through BeginRun and FinishRun, which check them.
func (s *DB) InsertRuns(ctx context.Context, runs []store.Run) error {
	return s.inTx(ctx, fmt.Sprintf("insert %d runs", len(runs)), func(tx *sql.Tx) error {
		for len(runs) > 0 {
			batch := runs[:min(bulkRows, len(runs))]
			runs = runs[len(batch):]
			args := make([]any, 0, len(batch)*18)
			for _, r := range batch {
				args = append(args, s.runValues(r)...)
			}
			query := `INSERT INTO runs (` + runDetail + `) VALUES ` + strings.TrimSuffix(strings.Repeat(runPlaceholders+", ", len(batch)), ", ")
			if _, err := tx.ExecContext(ctx, s.q(query), args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// InsertVersions writes versions of the store's tenant as they are, without files, in one
// transaction of multi-row inserts: the fast path of the benchmarks that fill a review queue,
// not part of store.Store (a runtime's versions go through AddVersion, which checks them and
// keeps their files).
func (s *DB) InsertVersions(ctx context.Context, vs []version.Version) error {
	const columns = 14 // tenant and versionColumns
	return s.inTx(ctx, fmt.Sprintf("insert %d versions", len(vs)), func(tx *sql.Tx) error {
		for len(vs) > 0 {
			batch := vs[:min(bulkRows, len(vs))]
			vs = vs[len(batch):]
			args := make([]any, 0, len(batch)*columns)
			for _, v := range batch {
				args = append(args, s.tenant, v.Skill, v.Digest, v.Version, string(v.Status), v.Source, "{}", "[]",
					v.CreatedBy, v.CreatedAt.UnixNano(), v.UpdatedBy, nanos(v.UpdatedAt), v.Note, v.User)
			}
			row := "(" + strings.TrimSuffix(strings.Repeat("?, ", columns), ", ") + ")"
			query := `INSERT INTO versions (tenant, ` + versionColumns + `) VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", len(batch)), ", ")
			if _, err := tx.ExecContext(ctx, s.q(query), args...); err != nil {
				return err
			}
		}
		return nil
	})
}
