package sqldb_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/internal/sqldb"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// A page of runs after a cursor seeks the index to the cursor, with or without a filter: a
// plan that scans walks every newer run first, and a page a million runs down takes a tenth of
// a second instead of a fraction of a millisecond (store's BenchmarkHistoryQueries).
func TestListRunsSeeksTheCursor(t *testing.T) {
	db := planDB(t)
	cursor := store.EncodeCursor(store.Run{ID: "run_x", StartedAt: time.Now()})
	for _, q := range []store.Query{
		{Cursor: cursor},
		{Cursor: cursor, Skill: "hello"},
		{Cursor: cursor, Status: store.StatusFailed},
		{Cursor: cursor, Caller: "bob"},
		{Cursor: cursor, Until: time.Now()},
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

// A caller's runs are one seek of the index by caller, in its order: a caller with few runs
// among many does not walk the tenant's every newer run, and no page sorts. Until is the seek's
// upper bound, as a cursor is (one row value: the lower of the two). Given both since and until,
// SQLite (without ANALYZE's statistics) seeks the tenant's index to the window instead, as it
// does for a skill: it reads the window's runs alone, which is what such a query asks for.
func TestListRunsSeeksTheCaller(t *testing.T) {
	db := planDB(t)
	cursor := store.EncodeCursor(store.Run{ID: "run_x", StartedAt: time.Now()})
	for _, c := range []struct {
		q    store.Query
		want string
	}{
		{store.Query{Caller: "bob"}, "SEARCH runs USING INDEX runs_tenant_caller_newest (tenant=? AND caller=?)"},
		{store.Query{Caller: "bob", Until: time.Now()}, "SEARCH runs USING INDEX runs_tenant_caller_newest (tenant=? AND caller=? AND (started_at,id)<(?,?))"},
		{store.Query{Caller: "bob", Until: time.Now(), Cursor: cursor}, "SEARCH runs USING INDEX runs_tenant_caller_newest (tenant=? AND caller=? AND (started_at,id)<(?,?))"},
		{store.Query{Until: time.Now()}, "SEARCH runs USING INDEX runs_tenant_newest (tenant=? AND (started_at,id)<(?,?))"},
	} {
		q, err := c.q.Check()
		if err != nil {
			t.Fatal(err)
		}
		query, args := sqldb.ListRunsQuery(db, q)
		p := plan(t, db, query, args...)
		if !strings.Contains(p, c.want) || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%+v: the plan does not %q in order: %s", c.q, c.want, p)
		}
	}
}

// Pruning one tenant reads that tenant's runs and artifacts alone: each statement seeks an index
// that leads with the tenant, so a sweep over many tenants costs what their own histories do,
// and the artifacts of the runs it drops are found by their key, not by reading every artifact.
// The tenants a sweep prunes are listed one index seek each, not by reading every run.
func TestPruneSeeksTheTenant(t *testing.T) {
	db := planDB(t)
	doomed := `SELECT id FROM runs WHERE ` + sqldb.PruneBeyond
	for _, c := range []struct {
		query string
		args  []any
		want  []string
	}{
		{`DELETE FROM runs WHERE ` + sqldb.PruneOlder, []any{"acme", 1}, []string{"SEARCH runs USING INDEX runs_tenant_newest (tenant=? AND started_at<?)"}},
		{sqldb.PruneLastKept, []any{"acme", 9}, []string{"SEARCH runs USING INDEX runs_tenant_newest (tenant=?)"}},
		{`DELETE FROM runs WHERE ` + sqldb.PruneBeyond, []any{"acme", 1, "run_x"}, []string{"SEARCH runs USING INDEX runs_tenant_newest (tenant=? AND (started_at,id)<(?,?))"}},
		{`SELECT DISTINCT sha256 FROM artifacts WHERE tenant = ? AND run_id IN (` + doomed + `)`, []any{"acme", "acme", 1, "run_x"},
			[]string{"SEARCH artifacts USING INDEX sqlite_autoindex_artifacts_1 (tenant=? AND run_id=?)", "SEARCH runs USING INDEX runs_tenant_newest (tenant=? AND (started_at,id)<(?,?))"}},
		{sqldb.RunTenants, []any{"", 100}, []string{"SEARCH runs USING COVERING INDEX runs_tenant_newest (tenant>?)"}},
	} {
		p := plan(t, db, c.query, c.args...)
		for _, w := range c.want {
			if !strings.Contains(p, w) {
				t.Errorf("%s\nthe plan does not %q: %s", c.query, w, p)
			}
		}
		if strings.Contains(p, "SCAN runs") || strings.Contains(p, "SCAN artifacts") {
			t.Errorf("%s\nthe plan reads every row of a table: %s", c.query, p)
		}
	}
}

// The review queue seeks versions_by_status and reads it in its order: no sort of a tenant's
// versions, however many there are.
func TestFindVersionsSeeksTheStatus(t *testing.T) {
	db := planDB(t)
	for _, q := range []version.Query{
		{Status: version.Pending, Limit: 100},
		{Status: version.Pending, Viewer: "alice", Limit: 100},
	} {
		query, args := sqldb.FindVersionsQuery(db, q)
		p := plan(t, db, query, args...)
		if !strings.Contains(p, "SEARCH versions USING INDEX versions_by_status (tenant=? AND status=?)") || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%+v: the plan does not read versions_by_status in order: %s", q, p)
		}
	}
}

// planDB is an empty SQLite store to ask for plans, closed when t ends.
func planDB(t *testing.T) *sqldb.DB {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*sqldb.DB)
}

// plan is SQLite's query plan for query, its steps joined by "; ".
func plan(t *testing.T, db *sqldb.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.SQL().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(steps, "; ")
}
