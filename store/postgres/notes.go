package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// notesChannel is the channel of the notes a version change sends (see sqldb.Dialect):
// NOTIFY is per database, so one name serves every Skillbox database of a server.
const notesChannel = "skillbox_versions"

// notifyVersions is run in every transaction that changes a version: PostgreSQL delivers the
// note when the transaction commits, and once per transaction however many changes it made.
const notifyVersions = "SELECT pg_notify('" + notesChannel + "', '')"

// Bounds of the wait between two tries to listen again after the listening connection failed.
const (
	minListenBackoff = 100 * time.Millisecond
	maxListenBackoff = 5 * time.Second
)

// notes listens for the version notes on a connection of its own (a pooled connection cannot
// wait for them) while anyone subscribes, and tells every subscriber. It is the store's
// version.Notifier: the runtime's catalog polls as well, so a note lost while the connection
// is down delays a change by one poll at most.
type notes struct {
	cfg *pgx.ConnConfig

	mu     sync.Mutex
	subs   map[chan struct{}]struct{}
	stop   context.CancelFunc // ends the listening loop; nil while none runs
	closed bool               // the store is closed: nobody listens again
}

func newNotes(cfg *pgx.ConnConfig) *notes {
	return &notes{cfg: cfg, subs: map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives after a note (notes coming together are one), and
// once each time the listener (re)connects. It stops receiving when ctx ends; the listening
// connection closes when no subscriber is left.
func (n *notes) Subscribe(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil // the store is closed: the catalog's poll finds it so, and says
	}
	n.subs[ch] = struct{}{}
	if n.stop == nil {
		lctx, cancel := context.WithCancel(context.Background())
		n.stop = cancel
		go n.listen(lctx)
	}
	n.mu.Unlock()
	context.AfterFunc(ctx, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.subs, ch)
		if len(n.subs) == 0 && n.stop != nil {
			n.stop()
			n.stop = nil
		}
	})
	return ch
}

// Close stops listening for good: the store is closed.
func (n *notes) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	clear(n.subs)
	if n.stop != nil {
		n.stop()
		n.stop = nil
	}
}

// tell wakes every subscriber that is not awake already.
func (n *notes) tell() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch := range n.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// listen listens until ctx ends, connecting again after a failure, with backoff.
func (n *notes) listen(ctx context.Context) {
	backoff := minListenBackoff
	for {
		listened, _ := n.session(ctx) // the catalog's poll stands in meanwhile, and logs a store that is down
		if ctx.Err() != nil {
			return
		}
		if listened {
			backoff = minListenBackoff
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxListenBackoff)
	}
}

// session connects, listens and tells of each note until the connection fails or ctx ends;
// listened says whether it got as far as listening.
func (n *notes) session(ctx context.Context) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, n.cfg.Copy())
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(cctx)
		cancel()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notesChannel); err != nil {
		return false, err
	}
	n.tell() // changes may have come while nobody listened
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, err
		}
		n.tell()
	}
}
