package sqldb_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/internal/sqldb"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// A page of runs after a cursor seeks the index to the cursor, with or without a filter: a
// plan that scans walks every newer run first, and a page a million runs down takes a tenth of
// a second instead of a fraction of a millisecond (store's BenchmarkHistoryQueries).
func TestListRunsSeeksTheCursor(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := s.(*sqldb.DB)
	cursor := store.EncodeCursor(store.Run{ID: "run_x", StartedAt: time.Now()})
	for _, q := range []store.Query{
		{Cursor: cursor},
		{Cursor: cursor, Skill: "hello"},
		{Cursor: cursor, Status: store.StatusFailed},
	} {
		q, err := q.Check()
		if err != nil {
			t.Fatal(err)
		}
		query, args := sqldb.ListRunsQuery(db, q)
		rows, err := db.SQL().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, "SEARCH runs USING INDEX") || !strings.Contains(p, "id)<(?,?)") {
			t.Errorf("%+v: the plan does not seek the cursor in an index: %s", q, p)
		}
	}
}
