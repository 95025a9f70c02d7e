package outbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// store is a Writer that keeps entries in order, and fails while down is set.
type store struct {
	mu      sync.Mutex
	down    error
	got     []string
	commits int
	gate    chan struct{} // when set, the next Write waits for it
	gated   int           // the entries of the Write that waits on the gate
}

func (s *store) Write(ctx context.Context, entries [][]byte) error {
	s.mu.Lock()
	gate := s.gate
	s.gate = nil
	if gate != nil {
		s.gated = len(entries)
	}
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down != nil {
		return s.down
	}
	for _, e := range entries {
		if !slices.Contains(s.got, string(e)) { // idempotent, as a Writer must be
			s.got = append(s.got, string(e))
		}
	}
	s.commits++
	return nil
}

func (s *store) set(down error) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

func (s *store) entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// eventually polls cond until it holds, for up to a minute: no test races the clock.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after a minute", what)
		}
	}
}

func fastOpts(dir string) Options {
	return Options{SpoolDir: dir, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
}

func open(t *testing.T, w Writer, opts Options) *Outbox {
	t.Helper()
	o, err := New(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	return o
}

func names(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, "e"+strconv.Itoa(i))
	}
	return out
}

// Entries that come while a write is in flight go together in the next one: a group commit.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	s := &store{gate: gate}
	o := open(t, s, Options{})
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := o.Add(context.Background(), []byte("first")); err != nil {
			t.Error(err)
		}
	})
	eventually(t, "writing the first", func() bool { return o.Stats().Queued == 0 && !s.isIdle() })
	for _, n := range names(0, 50) {
		wg.Go(func() {
			if err := o.Add(context.Background(), []byte(n)); err != nil {
				t.Error(err)
			}
		})
	}
	eventually(t, "queued behind the first", func() bool { return o.Stats().Queued == 50 })
	close(gate)
	wg.Wait()
	st := o.Stats()
	if st.Written != 51 || st.Commits != 2 || len(s.entries()) != 51 {
		t.Fatalf("written %d in %d commits (store has %d): want 51 in 2", st.Written, st.Commits, len(s.entries()))
	}
}

// gatedN is how many entries the Write waiting on the gate holds.
func (s *store) gatedN() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gated
}

// isIdle says whether no Write waits on the gate (it was taken by one).
func (s *store) isIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gate != nil
}

// While the store is down, entries are spooled and Add still succeeds; once it is back, the
// spool is replayed in order, new entries after it, and nothing is lost or duplicated.
func TestOutageSpoolsAndReplaysInOrder(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"", "disk"} {
		t.Run("spool="+dir, func(t *testing.T) {
			t.Parallel()
			opts := fastOpts("")
			if dir != "" {
				opts.SpoolDir = filepath.Join(t.TempDir(), dir)
			}
			s := &store{}
			o := open(t, s, opts)
			ctx := context.Background()
			add := func(ns []string) {
				for _, n := range ns {
					if err := o.Add(ctx, []byte(n)); err != nil {
						t.Fatal(n, err)
					}
				}
			}
			add(names(0, 10))
			s.set(errors.New("connection refused"))
			add(names(10, 30))
			st := o.Stats()
			if st.Up || st.Spooled != 20 || st.OldestSpooled.IsZero() || st.LastError != "connection refused" || st.WriteErrors == 0 {
				t.Fatalf("during the outage: %+v", st)
			}
			s.set(nil)
			add(names(30, 40)) // after the spooled ones, whether the replay has begun or not
			eventually(t, "replayed", func() bool { return o.Stats().Spooled == 0 && len(s.entries()) == 40 })
			if got, want := s.entries(), names(0, 40); !slices.Equal(got, want) {
				t.Fatalf("store has %v\nwant %v", got, want)
			}
			if st := o.Stats(); !st.Up || st.Dropped != 0 || st.SpoolBytes != 0 {
				t.Fatalf("after: %+v", st)
			}
			if dir != "" {
				left, _ := filepath.Glob(filepath.Join(opts.SpoolDir, "*", "*"+segSuffix))
				if len(left) != 0 {
					t.Fatalf("a drained spool left %v", left)
				}
				must(t, o.Close(context.Background()))
				if dirs, _ := filepath.Glob(filepath.Join(opts.SpoolDir, "*")); len(dirs) != 0 {
					t.Fatalf("a closed, empty spool left %v", dirs)
				}
			}
		})
	}
}

// A spool with no room drops entries, and says so: Add's error, Stats.Dropped.
func TestSpoolFullIsNeverSilent(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"", "disk"} {
		t.Run("spool="+dir, func(t *testing.T) {
			t.Parallel()
			opts := fastOpts("")
			if dir != "" {
				opts.SpoolDir = filepath.Join(t.TempDir(), dir)
			}
			opts.MaxSpoolBytes = 100
			s := &store{down: errors.New("down")}
			o := open(t, s, opts)
			var dropped int
			for i := range 20 {
				err := o.Add(context.Background(), []byte(fmt.Sprintf("entry-%02d", i)))
				switch {
				case errors.Is(err, ErrSpoolFull):
					dropped++
				case err != nil:
					t.Fatal(err)
				}
			}
			st := o.Stats()
			if dropped == 0 || st.Dropped != uint64(dropped) || st.SpoolBytes > 100 || st.Spooled+dropped != 20 {
				t.Fatalf("dropped %d; stats %+v", dropped, st)
			}
		})
	}
}

// What a process spooled and could not replay before it stopped, the next one replays; a write
// the process died in (a torn frame at the end) is cut, the whole entries before it kept.
func TestSpoolOutlivesTheProcess(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "spool")
	down := &store{down: errors.New("down")}
	o, err := New(down, fastOpts(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names(0, 5) {
		if err := o.Add(context.Background(), []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*", "*"+segSuffix))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	f, err := os.OpenFile(segs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, 'x'}); err != nil { // a frame cut short
		t.Fatal(err)
	}
	f.Close()

	up := &store{}
	o2 := open(t, up, fastOpts(dir))
	eventually(t, "replayed", func() bool { return len(up.entries()) == 5 && o2.Stats().Spooled == 0 })
	if got := up.entries(); !slices.Equal(got, names(0, 5)) {
		t.Fatalf("replayed %v", got)
	}
}

// Close writes what is queued, or spools it for the next process; Add after Close is refused.
func TestCloseDeliversTheQueue(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	s := &store{gate: gate}
	o, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, n := range names(0, 10) {
		wg.Go(func() {
			if err := o.Add(context.Background(), []byte(n)); err != nil {
				t.Error(err)
			}
		})
	}
	eventually(t, "queued", func() bool { return !s.isIdle() && o.Stats().Queued+s.gatedN() == 10 })
	closed := make(chan error)
	go func() { closed <- o.Close(context.Background()) }()
	close(gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(s.entries()) != 10 {
		t.Fatalf("written %v", s.entries())
	}
	if err := o.Add(context.Background(), []byte("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
}

// A Write that hangs is given up after WriteTimeout, and its batch spooled: the runs waiting on
// it go on.
func TestSlowStoreIsSpooled(t *testing.T) {
	t.Parallel()
	s := &store{gate: make(chan struct{})} // never opened: the first write hangs
	opts := fastOpts("")
	opts.WriteTimeout = 50 * time.Millisecond
	o := open(t, s, opts)
	if err := o.Add(context.Background(), []byte("a")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replayed", func() bool { return slices.Equal(s.entries(), []string{"a"}) })
}

// At Close, the spool is replayed while the store takes it; what a spool in memory cannot hand
// over is counted lost, never silent.
func TestCloseCountsWhatMemoryLoses(t *testing.T) {
	t.Parallel()
	s := &store{down: errors.New("down")}
	o, err := New(s, fastOpts(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names(0, 3) {
		if err := o.Add(context.Background(), []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := o.Stats(); st.Dropped != 3 {
		t.Fatalf("after Close: %+v", st)
	}
}

// Post does not wait for the write; Flush waits for every entry before it.
func TestPostDoesNotWait(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	s := &store{gate: gate}
	o := open(t, s, Options{})
	for _, n := range names(0, 5) {
		if err := o.Post(context.Background(), []byte(n)); err != nil { // the gate is shut: an Add would hang
			t.Fatal(err)
		}
	}
	flushed := make(chan error)
	go func() { flushed <- o.Flush(context.Background()) }()
	close(gate)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if got := s.entries(); !slices.Equal(got, names(0, 5)) {
		t.Fatalf("after Flush the store has %v", got)
	}
}

// The queue holds MaxQueue entries at most: one more waits for room, until its context ends.
func TestQueueIsBounded(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	s := &store{gate: gate}
	opts := Options{MaxQueue: 2}
	o := open(t, s, opts)
	var wg sync.WaitGroup
	for _, n := range names(0, 2) {
		wg.Go(func() {
			if err := o.Add(context.Background(), []byte(n)); err != nil {
				t.Error(err)
			}
		})
	}
	eventually(t, "the queue full", func() bool { return !s.isIdle() && o.Stats().Queued+s.gatedN() == 2 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := o.Post(ctx, []byte("third")); err == nil || !strings.Contains(err.Error(), "no room in the queue") {
		t.Fatalf("a third entry: %v", err)
	}
	close(gate)
	wg.Wait()
	if err := o.Post(context.Background(), []byte("later")); err != nil {
		t.Fatalf("once there is room: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Processes sharing a spool directory keep their own spools: one never replays, moves or
// removes another's while it lives; once it is gone, the next to start adopts what it left, in
// its order.
func TestSharedSpoolDirectory(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "spool")
	down := func() *store { return &store{down: errors.New("down")} }
	a, err := New(down(), fastOpts(root))
	must(t, err)
	b, err := New(down(), fastOpts(root))
	must(t, err)
	for i, n := range names(0, 6) {
		o := a
		if i%2 == 1 {
			o = b
		}
		must(t, o.Add(context.Background(), []byte(n)))
	}
	// A third, while both live: nothing of theirs to adopt.
	up := &store{}
	c, err := New(up, fastOpts(root))
	must(t, err)
	must(t, c.Flush(context.Background()))
	if st := c.Stats(); st.Spooled != 0 || len(up.entries()) != 0 {
		t.Fatalf("a live process's spool was taken: %+v %v", st, up.entries())
	}
	must(t, c.Close(context.Background()))
	if st := a.Stats(); st.Spooled != 3 || st.Dropped != 0 {
		t.Fatalf("a's spool: %+v", st)
	}
	must(t, a.Close(context.Background())) // its spool stays for the next process
	d := open(t, up, fastOpts(root))
	eventually(t, "a's records replayed", func() bool { return len(up.entries()) == 3 && d.Stats().Spooled == 0 })
	if got := up.entries(); !slices.Equal(got, []string{"e0", "e2", "e4"}) {
		t.Fatalf("adopted %v", got)
	}
	if st := b.Stats(); st.Spooled != 3 {
		t.Fatalf("b's spool, while b lives: %+v", st)
	}
	must(t, b.Close(context.Background()))
}
