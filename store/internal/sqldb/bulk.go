package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/skillbox-dev/skillbox/store"
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
			query := `INSERT INTO runs (` + runColumns + `) VALUES ` + strings.TrimSuffix(strings.Repeat(runPlaceholders+", ", len(batch)), ", ")
			if _, err := tx.ExecContext(ctx, s.q(query), args...); err != nil {
				return err
			}
		}
		return nil
	})
}
