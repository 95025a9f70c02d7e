package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// runColumns are the columns of runs a list reads, in the order scanRun reads them;
// runDetail adds what FindRun reads too (the result and the logs), and runValues writes both,
// in that order.
const (
	runColumns = `id, skill, version, digest, face, caller, status, error_kind, error_message,
	args, args_sha256, usage, duration_ms, started_at, finished_at, owner, lease_until, tenant, visible_to, logs_dropped, trimmed, trace_id`
	runDetail = runColumns + `, result, logs`
)

// runColumnCount is how many columns runDetail names; runPlaceholders are one row of their
// placeholders.
var (
	runColumnCount  = strings.Count(runDetail, ",") + 1
	runPlaceholders = "(" + strings.TrimSuffix(strings.Repeat("?, ", runColumnCount), ", ") + ")"
)

// BeginRun records r as running, unless the store has the run already other than queued.
func (s *DB) BeginRun(ctx context.Context, r store.Run) error {
	r.Status = store.StatusRunning
	return s.WriteRuns(ctx, []store.Run{r})
}

// FinishRun writes r whole, over what BeginRun wrote if it did.
func (s *DB) FinishRun(ctx context.Context, r store.Run) error {
	if !r.Status.Final() {
		return fmt.Errorf("finish run %s: status %q is not a final one", r.ID, r.Status)
	}
	return s.WriteRuns(ctx, []store.Run{r})
}

// The statements of WriteRuns, for n rows at once: starts and waits, which leave a run the
// store has alone (a start replayed after its end must not undo it) except that a start
// replaces a wait, and ends, which write the run whole. All are idempotent and independent of
// their order, so a batch writes its starts, then its ends, each in as few statements as the
// placeholders allow. A start over a wait keeps the wait's start time (when the run was
// accepted: its place in the lists does not move) and its caller's columns, and takes the
// version, the lease and its owner.
func beginRunsSQL(n int) string {
	return `INSERT INTO runs (` + runDetail + `) VALUES ` + rowsOf(n) + `
			ON CONFLICT (id) DO UPDATE SET status = excluded.status, version = excluded.version, digest = excluded.digest,
			owner = excluded.owner, lease_until = excluded.lease_until
			WHERE runs.status = 'queued' AND excluded.status = 'running' AND runs.tenant = excluded.tenant`
}

// An end sets what a run's end can change. Its skill, caller and start are its start's, and
// setting them anyway would rewrite the entries of three of the list indexes for every end.
func finishRunsSQL(n int) string {
	return `INSERT INTO runs (` + runDetail + `) VALUES ` + rowsOf(n) + `
			ON CONFLICT (id) DO UPDATE SET version = excluded.version, digest = excluded.digest,
			face = excluded.face, status = excluded.status, error_kind = excluded.error_kind,
			error_message = excluded.error_message, args = excluded.args, args_sha256 = excluded.args_sha256,
			usage = excluded.usage, duration_ms = excluded.duration_ms,
			finished_at = excluded.finished_at, owner = excluded.owner, lease_until = excluded.lease_until,
			visible_to = excluded.visible_to, logs_dropped = excluded.logs_dropped, trimmed = excluded.trimmed,
			result = excluded.result, logs = excluded.logs
			WHERE runs.tenant = excluded.tenant`
}

// rowsOf is n rows of placeholders.
func rowsOf(n int) string {
	return strings.TrimSuffix(strings.Repeat(runPlaceholders+", ", n), ", ")
}

// rowsPerStatement bounds the rows of one statement: 23 placeholders a row, under SQLite's
// oldest limit of 999 a statement.
const rowsPerStatement = 32

// WriteRuns writes runs in one transaction: a running run is a start, any other an end (see
// store.RunStore). Its starts go first, then its ends (the last of each run's, should a batch
// hold two; a start whose run ends in the batch is left out, the end writing the run whole),
// rowsPerStatement a statement, each statement prepared once per database. Where the dialect
// has a Pipeline (PostgreSQL) the whole batch is one round trip; elsewhere a batch of one
// statement is its own transaction, without a BEGIN and a COMMIT.
func (s *DB) WriteRuns(ctx context.Context, runs []store.Run) error {
	var begins, ends []store.Run
	last := map[string]int{}  // an end's place in ends, by run id
	begun := map[string]int{} // a start's or wait's place in begins, by run id
	for _, r := range runs {
		if r.Status.Final() {
			last[r.ID] = -1
		}
	}
	for _, r := range runs {
		if r.ID == "" || r.Skill == "" {
			return fmt.Errorf("record run: the run needs an id and a skill")
		}
		if !r.Status.Valid() {
			return fmt.Errorf("record run %s: status %q is not one of the store's", r.ID, r.Status)
		}
		if err := s.ownRun(r); err != nil {
			return err
		}
		if !r.Status.Final() {
			if _, ended := last[r.ID]; ended { // an end in the batch writes the run whole
				continue
			}
			// One row a run in a statement (PostgreSQL refuses to update a row twice in one):
			// a start replaces a wait, as it does in the table; otherwise the first stays.
			if i, ok := begun[r.ID]; ok {
				if begins[i].Status == store.StatusQueued && r.Status == store.StatusRunning {
					begins[i] = r
				}
				continue
			}
			begun[r.ID] = len(begins)
			begins = append(begins, r)
			continue
		}
		// A run id is the runtime's, random; still, a tenant's run never overwrites another's.
		r.Owner, r.LeaseUntil = "", time.Time{}
		if i := last[r.ID]; i >= 0 {
			ends[i] = r
			continue
		}
		last[r.ID] = len(ends)
		ends = append(ends, r)
	}
	what := "record runs"
	if len(runs) == 1 {
		what = "record run " + runs[0].ID
	}
	chunks := runChunks(begins, ends)
	if len(chunks) == 0 {
		return nil
	}
	if s.dialect.Pipeline != nil {
		return s.pipeline(ctx, what, chunks)
	}
	// The statements, prepared before the transaction takes its connection.
	stmts := make([]*sql.Stmt, len(chunks))
	for i, c := range chunks {
		st, err := s.prepared(ctx, c.query)
		if err != nil {
			return fmt.Errorf("%s: %s %s: prepare: %w", what, s.dialect.Name, s.where, err)
		}
		stmts[i] = st
	}
	exec := func(st *sql.Stmt, rs []store.Run) error {
		if _, err := st.ExecContext(ctx, s.rowValues(rs)...); err != nil {
			return fmt.Errorf("%s: %w", runsNamed(rs), err)
		}
		return nil
	}
	if len(chunks) == 1 { // one statement is a transaction of its own: no BEGIN and COMMIT to wait for
		if err := s.check(); err != nil {
			return err
		}
		if err := exec(stmts[0], chunks[0].runs); err != nil {
			return s.named(fmt.Errorf("%s: %s %s: %w", what, s.dialect.Name, s.where, err))
		}
		return nil
	}
	return s.inTx(ctx, what, func(tx *sql.Tx) error {
		for i, c := range chunks {
			if err := exec(tx.StmtContext(ctx, stmts[i]), c.runs); err != nil {
				return err
			}
		}
		return nil
	})
}

// runChunk is one statement of WriteRuns: its query, for its runs.
type runChunk struct {
	query string
	runs  []store.Run
}

// runChunks are the statements that write begins, then ends, rowsPerStatement runs each.
func runChunks(begins, ends []store.Run) []runChunk {
	var chunks []runChunk
	for _, group := range []struct {
		runs []store.Run
		sql  func(int) string
	}{{begins, beginRunsSQL}, {ends, finishRunsSQL}} {
		for rs := group.runs; len(rs) > 0; rs = rs[min(len(rs), rowsPerStatement):] {
			n := min(len(rs), rowsPerStatement)
			chunks = append(chunks, runChunk{group.sql(n), rs[:n]})
		}
	}
	return chunks
}

// pipeline writes chunks in the dialect's Pipeline: one transaction, one round trip.
func (s *DB) pipeline(ctx context.Context, what string, chunks []runChunk) error {
	stmts := make([]Statement, len(chunks))
	for i, c := range chunks {
		stmts[i] = Statement{SQL: s.numbered(c.query), Args: s.rowValues(c.runs)}
	}
	if err := s.check(); err != nil {
		return err
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		return s.named(fmt.Errorf("%s: %s %s: %w", what, s.dialect.Name, s.where, err))
	}
	defer c.Close()
	if err := s.dialect.Pipeline(ctx, c, stmts); err != nil {
		return s.named(fmt.Errorf("%s: %s %s: %w", what, s.dialect.Name, s.where, err))
	}
	return nil
}

// rowValues are the values of rs's rows, in the order of rowsOf's placeholders.
func (s *DB) rowValues(rs []store.Run) []any {
	args := make([]any, 0, len(rs)*runColumnCount)
	for _, r := range rs {
		args = append(args, s.runValues(r)...)
	}
	return args
}

// runsNamed names rs in an error: its first run, and how many more.
func runsNamed(rs []store.Run) string {
	if len(rs) == 1 {
		return "run " + rs[0].ID
	}
	return fmt.Sprintf("runs %s and %d more", rs[0].ID, len(rs)-1)
}

// RenewRuns extends the leases of owner's running runs (an owner is one recorder: the runs of
// every tenant it records).
func (s *DB) RenewRuns(ctx context.Context, owner string, until time.Time) (int, error) {
	var n int64
	err := s.inTx(ctx, "renew runs of "+owner, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET lease_until = ? WHERE owner = ? AND status = 'running'`), until.UnixNano(), owner)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// SweepRuns marks interrupted the running runs whose lease has expired, of every tenant: an
// expired lease is a dead process, whoever's runs it held.
func (s *DB) SweepRuns(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := s.inTx(ctx, "sweep runs", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET status = 'interrupted', error_kind = 'interrupted',
			error_message = 'the process running it stopped (or lost the store) before it finished: its lease expired',
			finished_at = lease_until, duration_ms = (lease_until - started_at) / 1000000.0, owner = '', lease_until = NULL
			WHERE status = 'running' AND lease_until < ?`), now.UnixNano())
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		res, err = tx.ExecContext(ctx, s.q(`UPDATE runs SET status = 'failed', error_kind = 'busy',
			error_message = 'the run waited in the cluster''s queue past its deadline and no node started it: try again later',
			finished_at = lease_until, duration_ms = (lease_until - started_at) / 1000000.0, lease_until = NULL
			WHERE status = 'queued' AND lease_until < ?`), now.UnixNano())
		if err != nil {
			return err
		}
		queued, err := res.RowsAffected()
		n += queued
		return err
	})
	return int(n), err
}

// CancelQueuedRun marks run id failed, kind canceled, if it is still queued.
func (s *DB) CancelQueuedRun(ctx context.Context, id string, now time.Time, message string) (bool, error) {
	var n int64
	err := s.inTx(ctx, "cancel a queued run", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET status = 'failed', error_kind = 'canceled',
			error_message = ?, finished_at = ?, duration_ms = (? - started_at) / 1000000.0, lease_until = NULL
			WHERE id = ? AND status = 'queued'`), message, now.UnixNano(), now.UnixNano(), id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, err
}

// InterruptRun marks run id interrupted if it is still running under owner.
func (s *DB) InterruptRun(ctx context.Context, id, owner string, now time.Time, message string) (bool, error) {
	var n int64
	err := s.inTx(ctx, "interrupt a run", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET status = 'interrupted', error_kind = 'interrupted',
			error_message = ?, finished_at = ?, duration_ms = (? - started_at) / 1000000.0, owner = '', lease_until = NULL
			WHERE id = ? AND status = 'running' AND owner = ?`), message, now.UnixNano(), now.UnixNano(), id, owner)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}

// FindRun reads one run of s's tenant.
func (s *DB) FindRun(ctx context.Context, id string) (store.Run, error) {
	if err := s.check(); err != nil {
		return store.Run{}, err
	}
	row := s.db.QueryRowContext(ctx, s.q(`SELECT `+runDetail+` FROM runs WHERE id = ? AND tenant = ?`), id, s.tenant)
	r, err := scanRunDetail(row)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Run{}, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	} else if err != nil {
		return store.Run{}, fmt.Errorf("run %q: %s %s: %w", id, s.dialect.Name, s.where, err)
	}
	if r.Artifacts, err = s.runArtifacts(ctx, id); err != nil {
		return store.Run{}, err
	}
	return r, nil
}

// ListRuns reads a page of s's tenant's runs, newest first.
func (s *DB) ListRuns(ctx context.Context, q store.Query) (store.Page, error) {
	if err := s.check(); err != nil {
		return store.Page{}, err
	}
	q, err := q.Check()
	if err != nil {
		return store.Page{}, err
	}
	query, args := s.listRunsQuery(q)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return store.Page{}, fmt.Errorf("list runs: %s %s: %w", s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	page := store.Page{Runs: []store.Run{}}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return store.Page{}, fmt.Errorf("list runs: %s %s: %w", s.dialect.Name, s.where, err)
		}
		page.Runs = append(page.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return store.Page{}, fmt.Errorf("list runs: %s %s: %w", s.dialect.Name, s.where, err)
	}
	if len(page.Runs) > q.Limit {
		page.Runs = page.Runs[:q.Limit]
		page.Next = store.EncodeCursor(page.Runs[q.Limit-1])
	}
	return page, nil
}

// listRunsQuery is ListRuns's SELECT for q (checked) over s's tenant's runs, in the dialect's
// placeholders, with its arguments.
func (s *DB) listRunsQuery(q store.Query) (string, []any) {
	where, args := []string{"tenant = ?"}, []any{s.tenant}
	if q.Viewer != "" {
		where, args = append(where, "(visible_to = '' OR visible_to = ?)"), append(args, q.Viewer)
	}
	if q.Skill != "" {
		where, args = append(where, "skill = ?"), append(args, q.Skill)
	}
	if q.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(q.Status))
	}
	if q.Caller != "" {
		where, args = append(where, "caller = ?"), append(args, q.Caller)
	}
	if !q.Since.IsZero() {
		where, args = append(where, "started_at >= ?"), append(args, q.Since.UnixNano())
	}
	if before, id, ok := listBefore(q); ok {
		// A row value, not "started_at < ? OR (started_at = ? AND id < ?)": both databases seek
		// the index to it, where the OR made them walk every newer run first (a page a million
		// runs down took 0.1-0.2 s).
		where = append(where, "(started_at, id) < (?, ?)")
		args = append(args, before.UnixNano(), id)
	}
	query := `SELECT ` + runColumns + ` FROM runs WHERE ` + strings.Join(where, " AND ")
	// One more than the page: whether it exists says whether there is a next page.
	query += ` ORDER BY started_at DESC, id DESC LIMIT ?`
	return s.q(query), append(args, q.Limit+1)
}

// listBefore is the one upper bound of q's page, as a row value (started_at, id) that every run
// listed is before: the cursor's, or q.Until's, whichever is lower. Until is (Until, ""), before
// which are exactly the runs started before Until, as no run's id is empty. One bound, not two:
// given both, SQLite seeks the index to one of them and walks from there to the other (a page
// far down under an Until of now would read every newer run first).
func listBefore(q store.Query) (time.Time, string, bool) {
	var t time.Time
	var id string
	if q.Cursor != "" {
		t, id, _ = store.DecodeCursor(q.Cursor) // checked by q.Check
	}
	if !q.Until.IsZero() && (q.Cursor == "" || !q.Until.After(t)) {
		t, id = q.Until, ""
	}
	return t, id, q.Cursor != "" || !q.Until.IsZero()
}

// runValues are r's column values, in runColumns' order, for s's tenant.
func (s *DB) runValues(r store.Run) []any {
	var kind, msg string
	if r.Error != nil {
		kind, msg = r.Error.Kind, r.Error.Message
	}
	var args, usage any
	if r.Args != nil {
		args = string(r.Args)
	}
	usage = "{}"
	if len(r.Usage) > 0 {
		usage = string(r.Usage)
	}
	trimmed := 0
	if r.Trimmed {
		trimmed = 1
	}
	return []any{r.ID, r.Skill, r.Version, r.Digest, r.Face, r.Caller, string(r.Status), kind, msg,
		args, r.ArgsSHA256, usage, r.DurationMs, r.StartedAt.UnixNano(), nanos(r.FinishedAt), r.Owner, nanos(r.LeaseUntil), s.tenant, r.VisibleTo,
		r.LogsDropped, trimmed, r.TraceID, rawText(r.Result), rawText(r.Logs)}
}

// rawText is JSON as a nullable text column: NULL for none.
func rawText(j json.RawMessage) any {
	if len(j) == 0 {
		return nil
	}
	return string(j)
}

// nanos is t in Unix nanoseconds, or NULL for the zero time.
func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// scanRun reads one row of runColumns.
func scanRun(row interface{ Scan(...any) error }) (store.Run, error) {
	return scanRunWith(row)
}

// scanRunDetail reads one row of runDetail.
func scanRunDetail(row interface{ Scan(...any) error }) (store.Run, error) {
	var result, logs sql.NullString
	r, err := scanRunWith(row, &result, &logs)
	if result.Valid {
		r.Result = json.RawMessage(result.String)
	}
	if logs.Valid {
		r.Logs = json.RawMessage(logs.String)
	}
	return r, err
}

// scanRunWith reads one row of runColumns, then the columns after them into more.
func scanRunWith(row interface{ Scan(...any) error }, more ...any) (store.Run, error) {
	var r store.Run
	var status, kind, msg, usage string
	var args sql.NullString
	var started int64
	var finished, lease sql.NullInt64
	var trimmed int
	dest := []any{&r.ID, &r.Skill, &r.Version, &r.Digest, &r.Face, &r.Caller, &status, &kind, &msg,
		&args, &r.ArgsSHA256, &usage, &r.DurationMs, &started, &finished, &r.Owner, &lease, &r.Tenant, &r.VisibleTo, &r.LogsDropped, &trimmed, &r.TraceID}
	if err := row.Scan(append(dest, more...)...); err != nil {
		return r, err
	}
	r.Trimmed = trimmed != 0
	r.Status = store.Status(status)
	r.Success = r.Status == store.StatusSucceeded
	if kind != "" || msg != "" {
		r.Error = &store.RunError{Kind: kind, Message: msg}
	}
	if args.Valid {
		r.Args = json.RawMessage(args.String)
	}
	if usage != "" && usage != "{}" {
		r.Usage = json.RawMessage(usage)
	}
	r.StartedAt = time.Unix(0, started).UTC()
	if finished.Valid {
		r.FinishedAt = time.Unix(0, finished.Int64).UTC()
	}
	if lease.Valid {
		r.LeaseUntil = time.Unix(0, lease.Int64).UTC()
	}
	return r, nil
}

// ownRun refuses a run that names another tenant than s's: a recorder on one tenant's store
// given another's run is a bug above, and must not file it under the wrong tenant.
func (s *DB) ownRun(r store.Run) error {
	if r.Tenant != "" && r.Tenant != s.tenant {
		return fmt.Errorf("record run %s: it is tenant %q's, and this store is tenant %q's", r.ID, r.Tenant, s.tenant)
	}
	return nil
}
