package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/history/outbox"
	"github.com/skillbox-dev/skillbox/run"
)

// RecorderOptions configure a Recorder. The zero value is the defaults.
type RecorderOptions struct {
	// Lease is how long a run stays running in the store without its recorder renewing it
	// (default 30 s; renewed every third of it). A process that dies mid-run has its runs marked
	// interrupted between Lease and Lease plus Sweep after its last renewal.
	Lease time.Duration
	// Sweep is how often the recorder marks expired runs interrupted (default 1 minute). Every
	// recorder sweeps, so one live replica is enough. Retention is applied with the sweep, at
	// most once a minute (pruneEvery) however short Sweep is.
	Sweep time.Duration
	// Retention bounds the run history of each tenant without a retention of its own in
	// TenantRetention, the default tenant's included: see [Retention]. MaxRuns counts each
	// tenant's runs apart, so every tenant keeps up to that many.
	Retention Retention
	// TenantRetention is the retention of the tenants that have their own, by name: a zero
	// field is Retention's. NewRecorder copies it.
	TenantRetention map[string]Retention
	// MaxArtifactBytes is the store's artifact quota as this recorder keeps artifacts (see
	// artifact.Store.PutArtifactsWithin): 0 is DefaultMaxArtifactBytes, Unlimited none.
	MaxArtifactBytes int64
	// Spool is the directory where records wait, in order, while the store cannot take them
	// (down, slow, full), replayed once it can; it outlives the process (see package outbox).
	// "" keeps them in memory: lost if the process stops before the store comes back.
	Spool string
	// MaxSpoolBytes bounds the spool (default 256 MiB): past it, records are dropped, counted
	// in Stats and logged.
	MaxSpoolBytes int64
	// WriteTimeout bounds one group commit (default 5 s): past it, its records are spooled.
	WriteTimeout time.Duration
	// Logger receives the recorder's own failures; nil discards them.
	Logger *slog.Logger
}

// Recorder writes a runtime's runs to a Store: it is the history.Recorder a Runtime's Config
// takes, and several Runtimes (one per tenant) may share one: each run goes to its tenant's
// store. Starts and ends go through an outbox: the runs that start or end while a commit is in
// flight share the next one, and while the store cannot take them they wait in the spool (see
// RecorderOptions.Spool), so a run never fails, and never waits more than one commit, because
// of the store. It holds a lease on each run in flight and renews it in the background, and
// sweeps and prunes the store, each tenant's history by its own retention; Close stops that (it
// does not close the Store).
type Recorder struct {
	s     Store
	opts  RecorderOptions
	owner string
	box   *outbox.Outbox
	stop  chan struct{}
	done  sync.WaitGroup
	once  sync.Once
	// refused counts the records the store refused and the writer dropped (Stats.Dropped).
	refused atomic.Uint64
	// pruned is when the loop last applied the retention (only the loop reads and writes it).
	pruned time.Time
}

// pruneEvery bounds how often the sweep applies the retention: pruning reads every tenant's
// history, and a short Sweep (a cluster's) is for the leases only.
const pruneEvery = time.Minute

var (
	_ history.Recorder = (*Recorder)(nil)
	_ artifact.Store   = (*Recorder)(nil)
)

// NewRecorder starts a Recorder over s: it replays what opts.Spool holds from an earlier
// process, and sweeps once at once, then every opts.Sweep. It fails only when the spool
// cannot be opened.
func NewRecorder(s Store, opts RecorderOptions) (*Recorder, error) {
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Second
	}
	if opts.Sweep <= 0 {
		opts.Sweep = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.TenantRetention = maps.Clone(opts.TenantRetention)
	var b [8]byte
	_, _ = rand.Read(b[:])
	r := &Recorder{s: s, opts: opts, owner: "rec_" + hex.EncodeToString(b[:]), stop: make(chan struct{})}
	box, err := outbox.New(recordWriter{r}, outbox.Options{SpoolDir: opts.Spool, MaxSpoolBytes: opts.MaxSpoolBytes,
		WriteTimeout: opts.WriteTimeout, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	r.box = box
	r.done.Go(r.loop)
	return r, nil
}

// Owner is the id this recorder holds its runs' leases under.
func (r *Recorder) Owner() string { return r.owner }

// BeginRun records rec as running, leased to this recorder. It returns once the start is
// committed with others', or spooled.
func (r *Recorder) BeginRun(ctx context.Context, rec *history.Record) error {
	run := fromRecord(rec, false)
	run.Owner = r.owner // the lease starts when it is written: see recordWriter
	return r.add(ctx, run)
}

// QueueRun records rec as waiting in a cluster's queue, held by no owner, until until (then
// the sweep ends it busy, unless a node started or ended it). It returns once the record is
// committed with others', or spooled, as a start does: a node asked for the run a moment later
// reads it.
func (r *Recorder) QueueRun(ctx context.Context, rec *history.Record, until time.Time) error {
	run := fromRecord(rec, false)
	run.Status, run.LeaseUntil = StatusQueued, until
	return r.add(ctx, run)
}

// CancelQueuedRun marks run id canceled if it is still queued: it is written at once, not
// through the outbox (see store.RunStore).
func (r *Recorder) CancelQueuedRun(ctx context.Context, id string, now time.Time, message string) (bool, error) {
	return r.s.CancelQueuedRun(ctx, id, now, message)
}

// InterruptRun marks run id interrupted if it is still running under owner (another
// recorder's): it is written at once, not through the outbox (see store.RunStore).
func (r *Recorder) InterruptRun(ctx context.Context, id, owner string, now time.Time, message string) (bool, error) {
	return r.s.InterruptRun(ctx, id, owner, now, message)
}

// FinishRun records rec's outcome. It returns once the end is queued: the run's client need
// not wait for the store (the run's start is durable already, and its lease says whether the
// process lived to write its end).
func (r *Recorder) FinishRun(ctx context.Context, rec *history.Record) error {
	return r.add(ctx, RunOf(rec))
}

// add hands run to the outbox: a start or a wait returns once it is written or spooled, an
// end once it is queued.
func (r *Recorder) add(ctx context.Context, run Run) error {
	data, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("record run %s: %w", run.ID, err)
	}
	if !run.Status.Final() {
		err = r.box.Add(ctx, data)
	} else {
		err = r.box.Post(ctx, data)
	}
	if err != nil {
		return fmt.Errorf("record run %s: %w", run.ID, err)
	}
	return nil
}

// Flush returns once every start and end recorded before it is written to the store, or
// spooled, or ctx ends: a reader of the store after a run's end calls it first.
func (r *Recorder) Flush(ctx context.Context) error { return r.box.Flush(ctx) }

// Stats says what the recorder's outbox holds and has done: whether the store takes records,
// what waits in the spool, what was dropped (by a full spool, or refused by the store).
func (r *Recorder) Stats() outbox.Stats {
	st := r.box.Stats()
	st.Dropped += r.refused.Load()
	return st
}

// of is the store of tenant: one recorder records the runs of every tenant's Runtime
// (Config.Tenant names it in each record), under one owner and one lease renewal.
func (r *Recorder) of(tenant string) Store {
	if tenant == "" {
		return r.s
	}
	return r.s.Tenant(tenant)
}

// recordWriter writes the outbox's batches to the store: each run of consecutive ones of one
// tenant in one transaction. A start's lease begins when it is written, so a start replayed
// from the spool is not swept at once.
type recordWriter struct{ r *Recorder }

func (w recordWriter) Write(ctx context.Context, entries [][]byte) error {
	runs := make([]Run, 0, len(entries))
	until := time.Now().Add(w.r.opts.Lease)
	for _, e := range entries {
		var run Run
		if err := json.Unmarshal(e, &run); err != nil || run.ID == "" || run.Skill == "" || !run.Status.Valid() {
			// Never a record this recorder wrote: skipped, or it would hold up every one after it.
			w.r.opts.Logger.Error("record dropped: it is not a run record", "bytes", len(e), "err", err)
			continue
		}
		if run.Status == StatusRunning {
			run.LeaseUntil = until
		}
		runs = append(runs, storable(run))
	}
	for len(runs) > 0 {
		n := 1
		for n < len(runs) && runs[n].Tenant == runs[0].Tenant {
			n++
		}
		if err := w.write(ctx, runs[:n]); err != nil {
			return err
		}
		runs = runs[n:]
	}
	return nil
}

// write writes runs of one tenant in one transaction. When the store refuses the batch for
// what it holds (ErrRefused), each run is written alone, and those the store refuses are
// records it will never take: dropped, counted and logged, or they would hold up every record
// after them. Any other failure — the store down, restarting, a connection lost — returns, and
// the whole batch waits to be written again (writes are idempotent): a run written alone
// failing so is never taken for a refusal.
func (w recordWriter) write(ctx context.Context, runs []Run) error {
	st := w.r.of(runs[0].Tenant)
	err := st.WriteRuns(ctx, runs)
	if err == nil || !errors.Is(err, ErrRefused) || ctx.Err() != nil {
		return err
	}
	for _, run := range runs {
		rerr := st.WriteRuns(ctx, []Run{run})
		switch {
		case rerr == nil:
		case errors.Is(rerr, ErrRefused):
			w.r.refused.Add(1)
			w.r.opts.Logger.Error("record dropped: the store refuses it", "run", run.ID, "err", rerr)
		default:
			return rerr
		}
	}
	return nil
}

// storable is run with every text a database takes: valid UTF-8 without NUL (PostgreSQL
// refuses both), its JSON fields re-encoded when they are not. A skill's error message or
// result is the skill's to choose; its record must still be kept.
func storable(run Run) Run {
	for _, f := range []*string{&run.ID, &run.Skill, &run.Version, &run.Digest, &run.Face, &run.Caller, &run.Tenant,
		&run.VisibleTo, &run.ArgsSHA256, &run.Owner} {
		*f = cleanText(*f)
	}
	if run.Error != nil {
		e := *run.Error
		e.Kind, e.Message = cleanText(e.Kind), cleanText(e.Message)
		run.Error = &e
	}
	for _, f := range []*json.RawMessage{&run.Args, &run.Result, &run.Logs, &run.Usage} {
		*f = cleanJSON(*f)
	}
	return run
}

// cleanText is s as valid UTF-8 without NUL: what is not is U+FFFD.
func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// cleanJSON is j, or j re-encoded when it holds invalid UTF-8 or a NUL byte (encoding/json
// writes U+FFFD for the one and escapes the other); nil when it is not JSON at all.
func cleanJSON(j json.RawMessage) json.RawMessage {
	if len(j) == 0 || (utf8.Valid(j) && bytes.IndexByte(j, 0) < 0) {
		return j
	}
	var v any
	if json.Unmarshal(j, &v) != nil {
		return nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return out
}

// PutArtifacts keeps a run's artifacts in the store, within opts.MaxArtifactBytes. A Recorder
// is the runtime's Config.Artifacts as well as its Config.Recorder.
func (r *Recorder) PutArtifacts(ctx context.Context, runID string, files []artifact.File) error {
	return r.s.PutArtifactsWithin(ctx, runID, files, r.opts.MaxArtifactBytes)
}

// OpenArtifact reads a run's artifact from the store, for viewer (see artifact.Store).
func (r *Recorder) OpenArtifact(ctx context.Context, viewer, runID, name string) (io.ReadCloser, artifact.Artifact, error) {
	return r.s.OpenArtifact(ctx, viewer, runID, name)
}

// Artifacts is the artifact store of one tenant's Runtime (its Config.Artifacts): the tenant's
// part of the store, within the same quota as every other tenant's (the quota is the store's).
// The Recorder itself is the default tenant's.
func (r *Recorder) Artifacts(tenant string) artifact.Store {
	return tenantArtifacts{s: r.s.Tenant(tenant), quota: r.opts.MaxArtifactBytes}
}

// tenantArtifacts is one tenant's artifacts in a store.
type tenantArtifacts struct {
	s     Store
	quota int64
}

func (t tenantArtifacts) PutArtifacts(ctx context.Context, runID string, files []artifact.File) error {
	return t.s.PutArtifactsWithin(ctx, runID, files, t.quota)
}

func (t tenantArtifacts) OpenArtifact(ctx context.Context, viewer, runID, name string) (io.ReadCloser, artifact.Artifact, error) {
	return t.s.OpenArtifact(ctx, viewer, runID, name)
}

// Close writes what the outbox holds (what the store will not take stays in the spool for the
// next process), then stops renewing, sweeping and pruning. Runs still in flight keep their
// lease until it expires. It does not close the Store.
func (r *Recorder) Close() {
	r.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		if err := r.box.Close(ctx); err != nil {
			r.opts.Logger.Error("records not written before close", "err", err)
		}
		cancel()
		close(r.stop)
	})
	r.done.Wait()
}

// closeTimeout bounds how long Close waits for the outbox.
const closeTimeout = 30 * time.Second

func (r *Recorder) loop() {
	renew := time.NewTicker(r.opts.Lease / 3)
	defer renew.Stop()
	sweep := time.NewTicker(r.opts.Sweep)
	defer sweep.Stop()
	r.sweep()
	for {
		select {
		case <-r.stop:
			return
		case <-renew.C:
			ctx, cancel := context.WithTimeout(context.Background(), r.opts.Lease/3)
			if _, err := r.s.RenewRuns(ctx, r.owner, time.Now().Add(r.opts.Lease)); err != nil {
				r.opts.Logger.Error("renew the leases of runs in flight", "err", err)
			}
			cancel()
		case <-sweep.C:
			r.sweep()
		}
	}
}

// sweep marks expired runs interrupted and applies the retention. It renews its own leases
// first: after the store was unreachable for longer than a lease, its own runs in flight must
// not be taken for a dead process's.
func (r *Recorder) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.Sweep)
	defer cancel()
	if _, err := r.s.RenewRuns(ctx, r.owner, time.Now().Add(r.opts.Lease)); err != nil {
		r.opts.Logger.Error("renew the leases of runs in flight", "err", err)
		return
	}
	if n, err := r.s.SweepRuns(ctx, time.Now()); err != nil {
		r.opts.Logger.Error("mark runs whose process died interrupted", "err", err)
	} else if n > 0 {
		r.opts.Logger.Warn("runs interrupted: their process stopped before they finished", "runs", n)
	}
	if time.Since(r.pruned) < pruneEvery {
		return
	}
	r.pruned = time.Now()
	if _, err := r.Prune(ctx, time.Now()); err != nil {
		r.opts.Logger.Error("prune run history", "err", err)
	}
}

// tenantsPage is how many tenants Prune lists at a time.
const tenantsPage = 100

// Prune applies the retention to the store's run history at now: each tenant's runs by its own
// (RecorderOptions.TenantRetention over Retention), the default tenant's and those of every
// tenant without one by Retention, one transaction per tenant. It says how many runs it
// deleted; a tenant whose prune fails does not stop the others, and the error names it. The
// recorder prunes at every sweep; call it to prune now, as a command that ends does.
func (r *Recorder) Prune(ctx context.Context, now time.Time) (int, error) {
	total, err := r.s.Tenant("").PruneRuns(ctx, r.retention(""), now)
	errs := []error{err}
	for after := ""; ; {
		names, err := r.s.RunTenants(ctx, after, tenantsPage)
		if err != nil {
			errs = append(errs, err)
			break
		}
		for _, name := range names {
			n, err := r.s.Tenant(name).PruneRuns(ctx, r.retention(name), now)
			total += n
			errs = append(errs, err)
		}
		if len(names) < tenantsPage || ctx.Err() != nil {
			// Out of time: the tenants left wait for the next sweep.
			break
		}
		after = names[len(names)-1]
	}
	return total, errors.Join(errs...)
}

// retention is the retention of tenant's runs.
func (r *Recorder) retention(tenant string) Retention {
	return r.opts.TenantRetention[tenant].Or(r.opts.Retention)
}

// RunOf is the store's form of a finished run's runtime record: what the store keeps of it,
// and what GET /v1/runs/{id} answers for a run only the runtime's memory still holds.
func RunOf(rec *history.Record) Run { return fromRecord(rec, true) }

// fromRecord is the store's form of a runtime record: a run's start, or with final its end.
func fromRecord(rec *history.Record, final bool) Run {
	res := rec.Result
	out := Run{ID: res.RunID, Skill: res.Skill, Version: res.Version, Digest: res.Digest,
		Face: string(rec.Face), Caller: rec.Caller, Tenant: rec.Tenant, VisibleTo: rec.VisibleTo, Args: rec.Args, ArgsSHA256: rec.ArgsSHA256,
		StartedAt: rec.StartedAt, Status: StatusRunning, TraceID: res.TraceID}
	if !final {
		return out
	}
	out.DurationMs = res.DurationMs
	out.FinishedAt = rec.StartedAt.Add(time.Duration(res.DurationMs * float64(time.Millisecond)))
	out.Usage, _ = json.Marshal(res.Usage)
	out.Result, out.LogsDropped, out.Trimmed, out.Artifacts = res.Result, res.LogsDropped, rec.Trimmed, res.Artifacts
	if len(res.Logs) > 0 {
		out.Logs, _ = json.Marshal(res.Logs)
	}
	out.Status, out.Success = Status(run.StatusOf(res)), res.Success
	if !res.Success && res.Error != nil {
		out.Error = &RunError{Kind: string(res.Error.Kind), Message: res.Error.Message}
	}
	return out
}
