package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// What one member writes to a bucket, another reads at once: reads go to the bucket's leader,
// not to the reader's own replica, which may not have applied the write yet. A key never
// written, or deleted, has no value.
func TestAWriteIsReadAtOnceOnAnyMember(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	peers := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	nodes := threeMembers(t, ctx, func(i int) Config { return Config{PeerListen: peers[i], Routes: peers} })
	bucket := catalogBucket(nodes[0].cfg.Name)
	stale := 0
	for i := range 300 {
		w, r := nodes[i%3], nodes[(i+1)%3]
		key := fmt.Sprintf("_._.s%d", i)
		rev, err := w.catalog.Put(ctx, key, fmt.Appendf(nil, "v%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if direct, err := r.catalog.Get(ctx, key); err != nil || direct.Revision() != rev {
			stale++ // what a direct get can answer
		}
		e, err := r.leaderGet(ctx, bucket, key)
		if err != nil || e.rev != rev || string(e.value) != fmt.Sprintf("v%d", i) {
			t.Fatalf("write %d read on another member: %q rev %d (%v), want rev %d", i, e.value, e.rev, err, rev)
		}
	}
	t.Logf("direct gets that missed a write just acknowledged: %d of 300", stale)
	if _, err := nodes[1].leaderGet(ctx, bucket, "_._.never"); !errors.Is(err, errKeyNotFound) {
		t.Fatalf("a key never written: %v", err)
	}
	if err := nodes[0].catalog.Delete(ctx, "_._.s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[2].leaderGet(ctx, bucket, "_._.s1"); !errors.Is(err, errKeyNotFound) {
		t.Fatalf("a deleted key: %v", err)
	}
}

// A read that no leader answers (one is being elected) ends after leaderGetWait when its
// context has no deadline of its own, rather than wait for ever.
func TestALeaderReadNoOneAnswersEnds(t *testing.T) {
	srv, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(joinBound) {
		t.Fatal("the NATS server did not start")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// What a member that is not the leader does with the request: nothing.
	if _, err := nc.Subscribe("$JS.API.STREAM.MSG.GET.>", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	n := &Node{nc: nc}
	start := time.Now()
	_, err = n.leaderGet(context.Background(), "SBX_CATALOG", "_._.s")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a read no one answers: %v, want the deadline", err)
	}
	if took := time.Since(start); took < leaderGetWait {
		t.Fatalf("it ended after %v, before leaderGetWait", took)
	}
}
