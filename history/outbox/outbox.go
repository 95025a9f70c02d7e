// Package outbox carries records from a run's path to the store that keeps them, so that a run
// waits on that store for one group commit at most and never fails because of it.
//
// Add queues an entry and returns once it is durable (Post, without waiting): committed by the Writer together with the
// entries that came while the previous commit was in flight (a group commit: one transaction
// for many runs), or, when the Writer fails or is slow, appended to a local spool and synced.
// While the spool holds entries, new ones go after them, and the outbox replays the spool to the
// Writer in order, with backoff, until it is empty: a store that is down costs the runs nothing
// and loses no record. A spool that is full drops entries; each drop is counted (Stats.Dropped),
// logged, and answered to its Add with ErrSpoolFull, never silent.
//
// The Writer is the store's side: a database transaction here, a JetStream publish in a
// cluster. The outbox knows entries only as bytes.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/internal/diskfull"
)

// Writer delivers entries to where they are kept.
type Writer interface {
	// Write keeps entries, in order, as one commit. After an error the outbox gives it the same
	// entries again later, so Write must be idempotent: an entry written twice is kept once.
	// It returns an error only for a failure worth trying again (the store is down, slow or
	// full); an entry it can never keep (malformed) it skips and reports itself, or it would
	// hold up every entry after it.
	Write(ctx context.Context, entries [][]byte) error
}

// Options configure an Outbox. The zero value is the defaults, with a spool in memory.
type Options struct {
	// SpoolDir is the directory of the spool (created 0700): entries the Writer could not take
	// wait there, across restarts, until it can. "" keeps the spool in memory, lost with the
	// process.
	SpoolDir string
	// MaxSpoolBytes bounds the spool (default 256 MiB); past it, entries are dropped.
	MaxSpoolBytes int64
	// MaxBatch bounds the entries of one Write (default 256).
	MaxBatch int
	// MaxQueue bounds the entries waiting for a Write (default 4096): Add waits for room.
	MaxQueue int
	// WriteTimeout bounds one Write (default 5 s): past it, the batch is spooled.
	WriteTimeout time.Duration
	// Linger is how long entries nobody waits for (Post's) may wait for company before they
	// are written (default 10 ms): an entry an Add waits for takes them along at once. It turns
	// many small commits into a few larger ones.
	Linger time.Duration
	// MinBackoff and MaxBackoff bound the wait between tries to replay the spool while the
	// Writer fails (defaults 100 ms and 5 s; doubled after each failure).
	MinBackoff, MaxBackoff time.Duration
	// Logger receives the outbox's failures; nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxSpoolBytes <= 0 {
		o.MaxSpoolBytes = 256 << 20
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = 4096
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 5 * time.Second
	}
	if o.Linger <= 0 {
		o.Linger = 10 * time.Millisecond
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(5*time.Second, o.MinBackoff)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Errors of Add, matchable with errors.Is.
var (
	// ErrSpoolFull: the Writer failed and the spool had no room: the entry was dropped.
	ErrSpoolFull = errors.New("the outbox's spool is full: the record was dropped")
	// ErrClosed: the outbox was closed before the entry was queued.
	ErrClosed = errors.New("the outbox is closed")
)

// Stats is what an outbox holds and has done, for metrics and health.
type Stats struct {
	// Up is false from a failed Write until one succeeds.
	Up bool `json:"up"`
	// LastError is the last failed Write's error, "" once one succeeds.
	LastError string `json:"last_error,omitempty"`
	// Queued are the entries waiting for a Write or the spool.
	Queued int `json:"queued"`
	// Spooled and SpoolBytes are what the spool holds; OldestSpooled is when its oldest entry
	// was spooled (zero when it is empty); MaxSpoolBytes its bound.
	Spooled       int       `json:"spooled"`
	SpoolBytes    int64     `json:"spool_bytes"`
	MaxSpoolBytes int64     `json:"max_spool_bytes"`
	OldestSpooled time.Time `json:"oldest_spooled,omitzero"`
	// Written are the entries Writes took, in Commits Writes; WriteErrors the Writes that
	// failed; Dropped the entries lost to a full (or failing) spool.
	Written     uint64 `json:"written"`
	Commits     uint64 `json:"commits"`
	WriteErrors uint64 `json:"write_errors"`
	Dropped     uint64 `json:"dropped"`
	// Losing is set from a drop until a write succeeds: records are being lost now.
	Losing bool `json:"losing"`
}

// Outbox is a durable, bounded queue in front of a Writer. It is safe for concurrent use.
type Outbox struct {
	w     Writer
	opts  Options
	slots chan struct{} // one per queued entry: MaxQueue bounds the queue
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once

	mu     sync.Mutex
	queue  []*pending
	waited int // the entries of queue someone waits for (Add's, Flush's)
	closed bool
	stats  Stats

	// Only the loop's goroutine touches these.
	sp      spool
	nextTry time.Time
	backoff time.Duration
}

// pending is one entry and the answer its Add waits for (nil for Post's).
type pending struct {
	data []byte
	done chan error
	at   time.Time // when it was queued
}

// New starts an outbox over w. A spool directory left by an earlier process is replayed first.
func New(w Writer, opts Options) (*Outbox, error) {
	opts = opts.withDefaults()
	var sp spool = newMemSpool(opts.MaxSpoolBytes)
	if opts.SpoolDir != "" {
		fs, err := openFileSpool(opts.SpoolDir, opts.MaxSpoolBytes, opts.Logger)
		if err != nil {
			return nil, fmt.Errorf("outbox: the spool %s: %w", opts.SpoolDir, err)
		}
		sp = fs
	}
	o := &Outbox{w: w, opts: opts, sp: sp, slots: make(chan struct{}, opts.MaxQueue),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	o.stats.Up = true
	o.stats.MaxSpoolBytes = opts.MaxSpoolBytes
	o.publishSpool()
	if n, _, _ := sp.size(); n > 0 {
		opts.Logger.Warn("outbox: replaying records an earlier process spooled", "records", n, "spool", opts.SpoolDir)
	}
	go o.loop()
	return o, nil
}

// Add queues data and returns once it is durable: written, or spooled (nil), or dropped
// (ErrSpoolFull, or the spool's error). It waits for room in the queue until ctx ends; once
// queued, the entry is answered within about one WriteTimeout, whatever ctx does.
func (o *Outbox) Add(ctx context.Context, data []byte) error {
	if data == nil {
		data = []byte{} // nil marks a Flush
	}
	p, err := o.enqueue(ctx, data, true)
	if err != nil {
		return err
	}
	return <-p.done
}

// Post queues data and returns without waiting for it to be written: for a record its caller
// need not wait on (a run's end, whose client has its answer). It waits for room in the queue
// until ctx ends. What becomes of the entry the outbox counts and logs (Stats); an entry
// queued when the process dies is lost, as the start's lease then tells (its run ends
// interrupted).
func (o *Outbox) Post(ctx context.Context, data []byte) error {
	if data == nil {
		data = []byte{}
	}
	_, err := o.enqueue(ctx, data, false)
	return err
}

// Flush returns once every entry queued before it is written or spooled, or ctx ends.
func (o *Outbox) Flush(ctx context.Context) error {
	p, err := o.enqueue(ctx, nil, true)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("outbox: flush: %w", context.Cause(ctx))
	}
}

// enqueue adds data to the queue once there is room; with wait, its pending has a done channel
// to answer.
func (o *Outbox) enqueue(ctx context.Context, data []byte, wait bool) (*pending, error) {
	select {
	case o.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("outbox: no room in the queue: %w", context.Cause(ctx))
	case <-o.stop:
		return nil, ErrClosed
	}
	p := &pending{data: data, at: time.Now()}
	if wait {
		p.done = make(chan error, 1)
	}
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		<-o.slots
		return nil, ErrClosed
	}
	o.queue = append(o.queue, p)
	if wait {
		o.waited++
	}
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return p, nil
}

// Stats says what the outbox holds and has done.
func (o *Outbox) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.stats
	s.Queued = len(o.queue)
	return s
}

// Close delivers what is queued (written, or spooled for the next process), then stops. What
// the spool holds stays there. Entries Added after Close are refused with ErrClosed. It waits
// until ctx ends at most.
func (o *Outbox) Close(ctx context.Context) error {
	o.once.Do(func() {
		o.mu.Lock()
		o.closed = true
		o.mu.Unlock()
		close(o.stop)
	})
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("outbox: close: %w", context.Cause(ctx))
	}
}

// loop is the one goroutine that writes and spools: new entries first (their runs wait), then
// the spool, a batch at a time.
func (o *Outbox) loop() {
	defer close(o.done)
	defer o.sp.close()
	for {
		batch, linger := o.take()
		if len(batch) > 0 {
			o.deliver(batch)
			continue
		}
		o.mu.Lock()
		// Closed and empty, read together: an entry queued before Close is delivered first.
		done := o.closed && len(o.queue) == 0
		o.mu.Unlock()
		if done {
			o.drain()
			return
		}
		wait := linger
		if n, _, _ := o.sp.size(); n > 0 {
			until := time.Until(o.nextTry)
			if until <= 0 {
				o.replay()
				continue
			}
			if wait == 0 || until < wait {
				wait = until
			}
		}
		var timer *time.Timer
		if wait > 0 {
			timer = time.NewTimer(wait)
		}
		o.idle(timer)
	}
}

// drain replays the spool at Close while the Writer takes it. What a spool on disk still holds
// waits for the next process; what one in memory holds is lost, and counted so.
func (o *Outbox) drain() {
	for {
		n, _, _ := o.sp.size()
		if n == 0 {
			return
		}
		o.replay()
		if o.backoff == 0 {
			continue
		}
		if _, mem := o.sp.(*memSpool); mem {
			o.mu.Lock()
			o.stats.Dropped += uint64(n)
			o.mu.Unlock()
			o.opts.Logger.Error("outbox: records lost at close: the store does not take them, and the spool is in memory", "records", n)
		}
		return
	}
}

// idle waits for an entry, the retry timer (nil for none) or Close.
func (o *Outbox) idle(retry *time.Timer) {
	var fire <-chan time.Time
	if retry != nil {
		defer retry.Stop()
		fire = retry.C
	}
	select {
	case <-o.wake:
	case <-fire:
	case <-o.stop:
	}
}

// take removes up to MaxBatch entries from the queue, once one of them is waited for, or the
// oldest has lingered long enough, or there is a batch's worth, or the outbox is closing;
// otherwise it says how long the oldest may linger still.
func (o *Outbox) take() ([]*pending, time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := min(len(o.queue), o.opts.MaxBatch)
	if n == 0 {
		return nil, 0
	}
	if o.waited == 0 && n < o.opts.MaxBatch && !o.closed {
		if left := o.opts.Linger - time.Since(o.queue[0].at); left > 0 {
			return nil, left
		}
	}
	batch := make([]*pending, n)
	copy(batch, o.queue)
	clear(o.queue[:n])
	o.queue = o.queue[n:]
	for _, p := range batch {
		if p.done != nil {
			o.waited--
		}
	}
	return batch, 0
}

// deliver writes batch, or spools it when the spool already holds entries (they go first) or
// the write fails, and answers each entry's Add.
func (o *Outbox) deliver(batch []*pending) {
	data := make([][]byte, 0, len(batch))
	for _, p := range batch {
		if p.data != nil { // nil: a Flush's marker
			data = append(data, p.data)
		}
	}
	var err error
	if len(data) == 0 {
		// Only Flush markers: nothing to write.
	} else if n, _, _ := o.sp.size(); n > 0 {
		err = o.spool(data)
	} else if werr := o.write(data); werr != nil {
		o.nextTry, o.backoff = time.Now().Add(o.opts.MinBackoff), o.opts.MinBackoff
		err = o.spool(data)
	}
	for _, p := range batch {
		if p.done != nil {
			p.done <- err
		}
		<-o.slots
	}
}

// write hands data to the Writer within WriteTimeout, and counts the outcome.
func (o *Outbox) write(data [][]byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.opts.WriteTimeout)
	defer cancel()
	err := o.w.Write(ctx, data)
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		if o.stats.Up {
			o.opts.Logger.Error("outbox: the store did not take the records: they wait in the spool", "records", len(data), "err", err)
		}
		o.stats.Up, o.stats.LastError = false, err.Error()
		o.stats.WriteErrors++
		return err
	}
	if !o.stats.Up {
		o.opts.Logger.Info("outbox: the store takes records again")
	}
	o.stats.Up, o.stats.LastError, o.stats.Losing = true, "", false
	o.stats.Written += uint64(len(data))
	o.stats.Commits++
	return nil
}

// spool appends data to the spool; when it cannot, the entries are dropped, counted and logged.
func (o *Outbox) spool(data [][]byte) error {
	err := diskfull.Name(o.sp.append(data), "the spool of records")
	if err != nil {
		o.mu.Lock()
		o.stats.Dropped += uint64(len(data))
		o.stats.Losing = true
		o.mu.Unlock()
		o.opts.Logger.Error("outbox: records dropped: the store is unreachable and the spool cannot keep them", "records", len(data), "err", err)
		if !errors.Is(err, ErrSpoolFull) {
			err = fmt.Errorf("%w: %w", ErrSpoolFull, err)
		}
	}
	o.publishSpool()
	return err
}

// replay writes the spool's oldest batch; after a failure the next try waits, twice as long
// each time up to MaxBackoff.
func (o *Outbox) replay() {
	data, err := o.sp.peek(o.opts.MaxBatch)
	if err == nil && len(data) > 0 {
		if err = o.write(data); err == nil {
			err = o.sp.advance(len(data))
		}
	}
	if err != nil {
		o.backoff = min(max(2*o.backoff, o.opts.MinBackoff), o.opts.MaxBackoff)
		o.nextTry = time.Now().Add(o.backoff)
	} else {
		o.backoff = 0
	}
	o.publishSpool()
}

// publishSpool copies the spool's size into the stats.
func (o *Outbox) publishSpool() {
	n, bytes, oldest := o.sp.size()
	o.mu.Lock()
	o.stats.Spooled, o.stats.SpoolBytes, o.stats.OldestSpooled = n, bytes, oldest
	o.mu.Unlock()
}
