// Package store keeps what Skillbox must remember beyond one process: the history of runs and
// skill versions (their status and files), and, as they come, artifacts and tenants, each its
// own set of tables and methods behind the same [Store].
//
// Two drivers implement it over one SQL schema, each with its own migrations:
// [github.com/skillbox-dev/skillbox/store/sqlite], embedded and the default, and
// [github.com/skillbox-dev/skillbox/store/postgres], for several replicas sharing one store.
// [github.com/skillbox-dev/skillbox/store/storetest] is the conformance suite both pass.
//
// The runtime never imports this package (an embedder who does not want a database links
// none): it calls the small history.Recorder interface, which [Recorder] implements.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/permit"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/version"
)

// Store is everything Skillbox keeps in a database. It is safe for concurrent use, by several
// goroutines and by several processes sharing the database. Close ends it; a closed Store
// answers [ErrClosed].
type Store interface {
	RunStore
	// version.Store keeps skill versions: their status and their files, content-addressed (a
	// blob shared by versions is stored once). See the runtime's version.Store for the contract.
	version.Store
	// Tenant returns the store of one tenant over the same database: every run and version it
	// reads or writes is that tenant's, bound in each statement, so nothing of another tenant
	// can be named through it. A Store from Open is the default tenant's (""). PruneRuns
	// prunes its own tenant's runs alone, by that tenant's retention; the sweep of expired
	// leases (SweepRuns) and RunTenants span every tenant from any of them. A tenant store's
	// Close does nothing: the Store it came from owns the database.
	Tenant(name string) Store
	// artifact.Store keeps the files runs leave in their output directories.
	ArtifactStore
	// permit.Store keeps what people allowed skills for a time (their answers to permission
	// requests), so every replica of a tenant honours them.
	permit.Store
	// Close releases the database. It is safe to call more than once.
	Close() error
}

// RunStore is the history of runs. Each method writes in one transaction: a reader sees a run
// whole or not at all.
type RunStore interface {
	// BeginRun records a run that was admitted and is about to start: status [StatusRunning],
	// held by r.Owner until r.LeaseUntil. The owner renews the lease (RenewRuns) while the run
	// goes on; once it expires, SweepRuns in any process marks the run interrupted. A run the
	// store has already (its start replayed after its end) is left as it is, unless it is
	// queued: its start replaces that.
	BeginRun(ctx context.Context, r Run) error
	// FinishRun records a run's outcome, replacing what BeginRun wrote (or writing it whole when
	// BeginRun never ran). r.Status must be a final status.
	FinishRun(ctx context.Context, r Run) error
	// WriteRuns records several runs' starts and ends in one transaction, in order: a run whose
	// Status is StatusRunning as BeginRun does, StatusQueued as a run that waits (written
	// unless the store has the run already: a late note of its wait never undoes its start or
	// its end), any other as FinishRun does. Writing the same runs again changes nothing, so a
	// batch that failed can be written again whole.
	WriteRuns(ctx context.Context, runs []Run) error
	// RenewRuns moves the lease of every run owner holds that is still running to until, and
	// says how many it renewed.
	RenewRuns(ctx context.Context, owner string, until time.Time) (int, error)
	// SweepRuns marks interrupted every running run whose lease ended before now, and failed
	// (kind busy) every queued run whose lease ended (no node started it, and none will), and
	// says how many. Its finish time is when its lease ended: for a running run, the last
	// moment its owner was known alive.
	SweepRuns(ctx context.Context, now time.Time) (int, error)
	// InterruptRun marks run id interrupted at now, with message, if it is still running under
	// owner (of whichever tenant: a run id is the runtime's, random), and says whether it did:
	// a node of a cluster that was given a run whose node died after it started ends it so,
	// without waiting for its lease.
	InterruptRun(ctx context.Context, id, owner string, now time.Time, message string) (bool, error)
	// CancelQueuedRun marks run id failed, kind canceled, at now, with message, if it is still
	// queued (no node has started it), and says whether it did: a cancel ends a waiting run at
	// once, and a start recorded first is left alone (its node cancels the run itself).
	CancelQueuedRun(ctx context.Context, id string, now time.Time, message string) (bool, error)
	// PruneRuns deletes the finished runs of this store's tenant beyond what keep allows at
	// now (the newest keep.MaxRuns of that tenant stay), with their artifacts, in one
	// transaction, and says how many. Other tenants' runs are neither deleted nor counted, and
	// running and queued runs are never pruned.
	PruneRuns(ctx context.Context, keep Retention, now time.Time) (int, error)
	// RunTenants lists the tenants other than the default ("") that have runs, of every tenant
	// whichever store it is called on, in byte order, those after after, at most limit (1 to
	// [MaxLimit]): the tenants a sweep prunes, each by its own retention, a page at a time.
	RunTenants(ctx context.Context, after string, limit int) ([]string, error)
	// FindRun returns the run with that id, or an error that is [ErrNotFound].
	FindRun(ctx context.Context, id string) (Run, error)
	// ListRuns returns runs newest first (by start, then id), filtered by q, one page at a time.
	ListRuns(ctx context.Context, q Query) (Page, error)
}

// artifact.Store keeps the files runs leave (see artifact.Store), content-addressed in
// the same blobs as versions' files, within a quota on the bytes artifacts hold. PutArtifacts
// applies [DefaultMaxArtifactBytes]; a [Recorder] applies its RecorderOptions.MaxArtifactBytes.
// PruneRuns deletes a pruned run's artifacts with it.
type ArtifactStore interface {
	artifact.Store
	// PutArtifactsWithin is PutArtifacts with a quota of its own: the bytes of the distinct
	// contents artifacts hold, those of files included, may not pass quota (0 is
	// DefaultMaxArtifactBytes, [Unlimited] none). Past it the error is run.ErrQuotaExceeded
	// and nothing is kept.
	PutArtifactsWithin(ctx context.Context, runID string, files []artifact.File, quota int64) error
}

// DefaultMaxArtifactBytes is the artifact quota of a store by default: 1 GiB of distinct
// contents, enough for a few thousand typical reports and images before retention prunes them,
// small enough that a runaway skill cannot fill a disk.
const DefaultMaxArtifactBytes = 1 << 30

// Status is where a run stands.
type Status string

const (
	StatusRunning     Status = "running"             // admitted and not finished; its owner holds a lease
	StatusSucceeded   Status = run.StatusSucceeded   // finished, and the skill succeeded
	StatusFailed      Status = run.StatusFailed      // finished with an error (ErrorKind says which)
	StatusInterrupted Status = run.StatusInterrupted // its process died (or lost the store) mid-run

	// StatusQueued is a run a node of a cluster accepted for the cluster's queue, which no node
	// has started yet: no owner holds it; its lease is when the sweep gives up on it (it waits
	// at most until then: see SweepRuns). A start (BeginRun) replaces it.
	StatusQueued Status = "queued"
)

// Valid says whether s is one of the statuses above.
func (s Status) Valid() bool {
	switch s {
	case StatusRunning, StatusQueued, StatusSucceeded, StatusFailed, StatusInterrupted:
		return true
	}
	return false
}

// Final says whether a run with status s is over.
func (s Status) Final() bool { return s.Valid() && s != StatusRunning && s != StatusQueued }

// Run is one run as the store keeps it. Its JSON is the shape GET /v1/runs answers with; the
// fields a history.Record shares with it have the same names.
type Run struct {
	ID      string `json:"run_id"`
	Skill   string `json:"skill"`
	Version string `json:"version"`
	// Digest is the identity of the skill version that ran.
	Digest string `json:"digest,omitempty"`
	Face   string `json:"face"`
	Caller string `json:"caller,omitempty"`
	// Tenant is the tenant the run belongs to ("" for the default tenant): a store's tenant
	// view (Store.Tenant) reads and writes its own runs only.
	Tenant string `json:"tenant,omitempty"`
	// VisibleTo is the user alone who may see the run, with the tenant's admins: the user of a
	// run of a skill of their own (visibility user). "" is the whole tenant.
	VisibleTo string `json:"visible_to,omitempty"`
	Status    Status `json:"status"`
	// Success is Status == StatusSucceeded, for readers of the runtime's result shape.
	Success bool      `json:"success"`
	Error   *RunError `json:"error,omitempty"`
	// Args are the run's arguments, when the policy records them (nil otherwise).
	Args json.RawMessage `json:"args,omitempty"`
	// ArgsSHA256 is the hex sha256 of the arguments as given, recorded always: it tells two runs
	// with the same arguments apart from others without keeping them.
	ArgsSHA256 string `json:"args_sha256,omitempty"`
	// Result is the run's result value (JSON) and Logs its log entries (a JSON array of the
	// runtime's LogEntry), once it finished, as the policy keeps them (runs.omitResults,
	// omitLogs, maxRecordBytes); LogsDropped counts the entries the run itself dropped, and
	// Trimmed says the record was cut to the policy's bound. ListRuns leaves Result and Logs
	// out: FindRun reads them.
	Result      json.RawMessage `json:"result,omitempty"`
	Logs        json.RawMessage `json:"logs,omitempty"`
	LogsDropped int             `json:"logs_dropped,omitempty"`
	Trimmed     bool            `json:"trimmed,omitempty"`
	// Artifacts are the files the run left in its output directory, by name, as the store
	// keeps them: FindRun reads them (ListRuns leaves them out).
	Artifacts []artifact.Artifact `json:"artifacts,omitempty"`
	// TraceID is the W3C trace of the run's span, when it had one (run.Result.TraceID).
	TraceID string `json:"trace_id,omitempty"`
	// Usage is the run's usage (the runtime's Usage as JSON), once it finished.
	Usage      json.RawMessage `json:"usage,omitempty"`
	DurationMs float64         `json:"duration_ms"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at,omitzero"`
	// Owner is the recorder that holds the run while it is running, and LeaseUntil when its
	// hold ends unless renewed.
	Owner      string    `json:"owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
}

// run.Error is a failed run's error kind and message.
type RunError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Query filters and pages ListRuns. The zero Query is the newest [DefaultLimit] runs.
type Query struct {
	// Viewer, when set, leaves out the runs visible to another user alone (Run.VisibleTo): a
	// face sets it to access.Principal.Viewer of its caller.
	Viewer string
	Skill  string // only this skill's runs
	Status Status // only runs with this status
	// Caller, when set, is the one caller whose runs are listed (Run.Caller: the user of the
	// key that started it, else the key's name).
	Caller string
	Since  time.Time // only runs started at or after it
	// Until, when set, lists only runs started before it; with Since, the runs of [Since, Until).
	Until time.Time
	// Limit is the page size: 0 is DefaultLimit, more than MaxLimit is an error.
	Limit int
	// Cursor is a previous page's Next: the page after it.
	Cursor string
}

// Page is one page of runs, newest first. Next, when not empty, is the Query.Cursor of the page
// after it.
type Page struct {
	Runs []Run  `json:"runs"`
	Next string `json:"next_cursor,omitempty"`
}

// The page sizes of ListRuns.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

var (
	// ErrNotFound is what FindRun's error is when there is no such run.
	ErrNotFound = errors.New("no such run")
	// ErrRefused is a write the database refuses for what it holds (a value it cannot store, a
	// constraint), not for its own state: written again, it would be refused again. Any other
	// error of a write (the database is down, busy, slow, full) is worth trying again.
	ErrRefused = errors.New("the database refuses the record")
	// ErrClosed is what every method's error is after Close.
	ErrClosed = errors.New("the store is closed")
	// ErrBadQuery is what ListRuns's error is for a query it cannot answer (a limit out of
	// range, a cursor it did not make, an unknown status).
	ErrBadQuery = errors.New("bad run query")
	// ErrSchemaTooNew is what Open's error is when the database was migrated by a newer
	// Skillbox than this one: using it could lose what the newer one wrote.
	ErrSchemaTooNew = errors.New("the database's schema is newer than this skillbox")
)
