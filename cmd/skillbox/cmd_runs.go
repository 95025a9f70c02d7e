package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/store"
)

// runsFlags are the flags of skillbox runs: the store.Query it asks.
type runsFlags struct {
	skill, status, since, cursor string
	limit                        int
}

var cmdRuns = &command{
	summary: "list the recorded runs, newest first, or print one run whole: skillbox runs RUNID",
	usage:   "[RUNID] [--tenant NAME] [--skill ID] [--status S] [--since DUR|TIME] [--limit N] [--cursor C]",
	long: `List the runs recorded in the store (see --data-dir), newest first: every run of skillbox run,
script, serve and mcp that was not --no-store. Filter by skill, by status (queued, running, succeeded,
failed, interrupted) and by start (--since 2h, 7d, or a time: 2025-06-01, 2025-06-01T12:00:00Z).
One page at a time: --json prints the page with its next_cursor, which --cursor continues from;
the table says the --cursor of the next page on stderr.

With a run id (as run --json prints it, or the table's first column), print that run whole: its
arguments when the policy records them, its error, its usage.

The runs are the default tenant's unless --tenant names a tenant of serve --tenants: then they
are that tenant's, every one of them (its users' own runs too: whoever opens the store is the
admin of every tenant), and a run id is looked for in that tenant alone. A tenant with no runs
at all says so on stderr, with the tenants that have some.`,
	example: `  skillbox runs
  skillbox runs --skill word-count --status failed --since 24h
  skillbox runs run_3b1f0c9a2e7d4c18a9e1b2c3
  skillbox runs --tenant acme --status failed
  skillbox runs --tenant acme run_3b1f0c9a2e7d4c18a9e1b2c3`,
	completeFlags: map[string]flagCompletion{"tenant": completeRunTenants},
	flags: func(fs *pflag.FlagSet, e *env) {
		tenantFlag(fs, e, "the runs of tenant `NAME` of serve --tenants, every one of them, its users' own too (default: the default tenant)")
		fs.StringVar(&e.runs.skill, "skill", "", "only the runs of skill `ID`")
		fs.StringVar(&e.runs.status, "status", "", "only the runs with status `S`: queued, running, succeeded, failed or interrupted")
		fs.StringVar(&e.runs.since, "since", "", "only the runs started since `DUR|TIME`: a duration back from now (90m, 24h, 7d) or a time (2025-06-01, 2025-06-01 12:00, RFC 3339)")
		fs.IntVar(&e.runs.limit, "limit", 0, fmt.Sprintf("at most `N` runs (1 to %d; default %d)", store.MaxLimit, store.DefaultLimit))
		fs.StringVar(&e.runs.cursor, "cursor", "", "the page after the one whose next_cursor is `C`")
		storeFlags(fs, e, false)
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) > 1 {
			return e.fail(exitUsage, "runs takes at most one run id, e.g. skillbox runs run_3b1f0c9a2e7d4c18a9e1b2c3")
		}
		var q store.Query
		if len(pos) == 0 {
			var err error
			if q, err = e.runs.query(time.Now()); err != nil {
				return e.fail(exitUsage, "%v", err)
			}
		}
		h, code := e.openStore(ctx, false)
		if code != exitOK {
			return code
		}
		if h == nil {
			return exitOK // unreachable: runs has no --no-store
		}
		defer h.Close()
		runs := h.store // the default tenant's
		if e.tenant != "" {
			runs = h.store.Tenant(e.tenant)
		}
		if len(pos) == 1 {
			return e.showRun(ctx, runs, h.where, pos[0])
		}
		page, err := runs.ListRuns(ctx, q)
		if errors.Is(err, store.ErrBadQuery) {
			return e.fail(exitUsage, "%v", err)
		} else if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		if len(page.Runs) == 0 {
			e.explainNoRuns(ctx, h.store, runs, h.where)
		}
		if e.json {
			return e.report("", page)
		}
		writeRuns(e, page.Runs)
		if page.Next != "" {
			fmt.Fprintf(e.stderr, "more runs: the same command with --cursor %s\n", page.Next)
		}
		return exitOK
	},
}

// query is the store.Query the flags ask, at now.
func (f runsFlags) query(now time.Time) (store.Query, error) {
	q := store.Query{Skill: f.skill, Status: store.Status(f.status), Limit: f.limit, Cursor: f.cursor}
	if f.limit < 0 || f.limit > store.MaxLimit {
		return q, fmt.Errorf("--limit %d: give 1 to %d runs a page", f.limit, store.MaxLimit)
	}
	if q.Status != "" && !q.Status.Valid() {
		return q, fmt.Errorf("--status %q: use queued, running, succeeded, failed or interrupted", f.status)
	}
	if f.since != "" {
		t, err := parseSince(f.since, now)
		if err != nil {
			return q, err
		}
		q.Since = t
	}
	return q, nil
}

// sinceLayouts are the times --since reads, in the local time zone unless they say theirs.
var sinceLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", time.DateTime, "2006-01-02 15:04", time.DateOnly}

// parseSince reads --since: a duration back from now (Go's, plus days: 7d, 1d12h), or a time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := store.ParseAge(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("--since %s: give a positive duration, such as 24h", s)
		}
		return now.Add(-d), nil
	}
	for _, l := range sinceLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: give a duration back from now (90m, 24h, 7d) or a time (2025-06-01, 2025-06-01 12:00, 2025-06-01T12:00:00Z)", s)
}

// writeRuns writes runs as a table, one row a run.
func writeRuns(e *env, runs []store.Run) {
	rows := make([][]string, 0, len(runs))
	for _, r := range runs {
		kind := ""
		if r.Error != nil {
			kind = r.Error.Kind
		}
		dur := "-"
		if r.Status != store.StatusRunning {
			dur = formatMs(r.DurationMs)
		}
		rows = append(rows, []string{clean(r.ID), clean(r.Skill), clean(r.Version), shortDigest(r.Digest), clean(r.Face),
			clean(r.Caller), string(r.Status), clean(kind), dur, r.StartedAt.Local().Format(time.DateTime)})
	}
	writeRows(e.stdout, []string{"RUN", "SKILL", "VERSION", "DIGEST", "FACE", "CALLER", "STATUS", "ERROR", "DURATION", "STARTED"}, rows)
}

// formatMs is a duration in milliseconds for a person: 0.8ms, 412ms, 3.2s, 2m5s.
func formatMs(ms float64) string {
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + "s"
	}
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Second).String()
}

// explainNoRuns says on stderr, after an empty page, when the tenant of runs (a view of all,
// the default tenant's store) has no runs at all, which tenants have some: a mistyped --tenant
// must not pass for a quiet tenant, nor a forgotten one for an empty history.
func (e *env) explainNoRuns(ctx context.Context, all, runs store.Store, where string) {
	if p, err := runs.ListRuns(ctx, store.Query{Limit: 1}); err != nil || len(p.Runs) > 0 {
		return
	}
	names, err := all.RunTenants(ctx, "", maxListed+1)
	if err != nil {
		return
	}
	have := strings.Join(names, ", ")
	if len(names) > maxListed {
		have = strings.Join(names[:maxListed], ", ") + " and more"
	}
	if e.tenant == "" {
		if len(names) > 0 {
			fmt.Fprintf(e.stderr, "skillbox: the default tenant has no runs in %s; tenants with runs: %s (skillbox runs --tenant NAME)\n", where, clean(have))
		}
		return
	}
	if p, err := all.ListRuns(ctx, store.Query{Limit: 1}); err == nil && len(p.Runs) > 0 {
		have = strings.TrimPrefix(have+", the default tenant (without --tenant)", ", ")
	}
	if have == "" {
		fmt.Fprintf(e.stderr, "skillbox: tenant %s has no runs in %s, and no tenant has any\n", e.tenant, where)
		return
	}
	fmt.Fprintf(e.stderr, "skillbox: tenant %s has no runs in %s; tenants with runs: %s\n", e.tenant, where, clean(have))
}

// showRun prints the run id of runs (a tenant's view of the store at where) whole.
func (e *env) showRun(ctx context.Context, runs store.Store, where, id string) int {
	r, err := runs.FindRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		if e.tenant != "" {
			return e.fail(exitFailed, "no run %q of tenant %s in %s: skillbox runs --tenant %s lists its runs (a run of another tenant is found with that tenant's --tenant, the default tenant's without one)", id, e.tenant, where, e.tenant)
		}
		return e.fail(exitFailed, "no run %q in %s: skillbox runs lists the runs there are (a run of --no-store, or one pruned by retention, is not kept; a run of a tenant of serve --tenants is found with --tenant NAME)", id, where)
	} else if err != nil {
		return e.fail(exitFailed, "%v", err)
	}
	if e.json {
		return e.report("", r)
	}
	version := clean(r.Version)
	if r.Digest != "" {
		version = strings.TrimSpace(version + " " + r.Digest)
	}
	lines := [][]string{{"run", clean(r.ID)}, {"skill", clean(r.Skill)}, {"version", version}, {"face", clean(r.Face)},
		{"caller", clean(r.Caller)}, {"status", string(r.Status)}}
	if r.Error != nil {
		lines = append(lines, []string{"error", clean(r.Error.Kind + ": " + r.Error.Message)})
	}
	switch {
	case r.Args != nil:
		lines = append(lines, []string{"args", cleanJSON(r.Args)})
	case r.ArgsSHA256 != "":
		lines = append(lines, []string{"args", "not recorded (the policy does not keep them); sha256 " + r.ArgsSHA256})
	}
	lines = append(lines, []string{"started", r.StartedAt.Local().Format(time.RFC3339Nano)})
	if !r.FinishedAt.IsZero() {
		lines = append(lines, []string{"finished", r.FinishedAt.Local().Format(time.RFC3339Nano)},
			[]string{"duration", formatMs(r.DurationMs)})
	}
	if r.Status == store.StatusRunning {
		lines = append(lines, []string{"lease", "held by " + clean(r.Owner) + " until " + r.LeaseUntil.Local().Format(time.RFC3339)})
	}
	if len(r.Usage) > 0 {
		lines = append(lines, []string{"usage", cleanJSON(r.Usage)})
	}
	for _, l := range lines {
		fmt.Fprintf(e.stdout, "%-9s %s\n", l[0], l[1])
	}
	return exitOK
}
