package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// joinBound bounds how long a test waits for a cluster to form: seconds on a busy machine.
const joinBound = 2 * time.Minute

func TestConfigCheckSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "--cluster takes embedded or the nats://"},
		{Config{URLs: []string{"a:4222"}}, "not a nats:// or tls:// URL"},
		{Config{Embedded: true}, "pass --data-dir"},
		{Config{Embedded: true, DataDir: dir, Listen: "nowhere"}, "is not HOST:PORT"},
		{Config{Embedded: true, DataDir: dir, Routes: []string{"127.0.0.1:6222"}}, "needs --cluster-peer-listen"},
		{Config{Embedded: true, DataDir: dir, PeerListen: "127.0.0.1:6222", Routes: []string{"127.0.0.1:6222", "127.0.0.1:6223"}}, "a cluster of two members loses its quorum"},
		{Config{URLs: []string{"nats://a:4222", "nats://b:4222"}}, "a cluster of two members"},
		{Config{Embedded: true, DataDir: dir, Replicas: 3}, "but the cluster has 1 member"},
		{Config{Embedded: true, DataDir: dir, Replicas: 2}, "--cluster-replicas 2 loses its quorum"},
		{Config{Embedded: true, DataDir: dir, Name: "a.b"}, "--cluster-name"},
		{Config{Embedded: true, DataDir: dir, NodeID: "a b"}, "--node-id"},
		{Config{Embedded: true, DataDir: dir, AckWait: time.Millisecond}, "--run-ack-wait"},
		{Config{Embedded: true, DataDir: dir, MaxQueue: 10, TenantMaxQueue: 11}, "--tenant-max-queue 11 is more than"},
	} {
		err := c.cfg.WithDefaults().Check()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an ErrConfig saying %q", c.cfg, err, c.want)
		}
	}
	three := Config{Embedded: true, DataDir: dir, PeerListen: "h:1", Routes: []string{"h:1", "h:2", "h:3"}}.WithDefaults()
	if err := three.Check(); err != nil || three.Replicas != 3 {
		t.Errorf("three members: %v, replicas %d, want none and 3", err, three.Replicas)
	}
	if one := (Config{Embedded: true, DataDir: dir}).WithDefaults(); one.Replicas != 1 || one.Listen != DefaultListen || !validName(one.NodeID) {
		t.Errorf("one member: replicas %d, listen %q, node %q", one.Replicas, one.Listen, one.NodeID)
	}
}

// join makes a node of cfg, closed at the end of the test.
func join(t *testing.T, ctx context.Context, cfg Config, slots int) *Node {
	t.Helper()
	n, err := Join(ctx, cfg, func() Presence { return Presence{Slots: slots, Free: slots} })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// A node alone is a cluster of one: its streams hold its bounds, it lists itself, and a
// tenant's queue past --tenant-max-queue refuses the newest run while another tenant's and
// the queue in all (--cluster-max-queue) take theirs until their own bound.
func TestOneEmbeddedNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	n := join(t, ctx, Config{Embedded: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", NodeID: "solo",
		MaxQueue: 5, TenantMaxQueue: 3, KeepEvents: time.Minute, MaxEventBytes: 1 << 20}, 4)
	st, err := n.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Replicas != 1 || len(st.Nodes) != 1 || st.Nodes[0].Node != "solo" || st.Nodes[0].Slots != 4 || st.Queued != 0 {
		t.Fatalf("status %+v", st)
	}
	ri, err := n.runs.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := ri.Config; c.MaxMsgs != 5 || c.MaxMsgsPerSubject != 3 || c.Retention != jetstream.WorkQueuePolicy || c.Discard != jetstream.DiscardNew {
		t.Errorf("run queue %+v", c)
	}
	ei, err := n.evs.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := ei.Config; c.MaxAge != time.Minute || c.MaxBytes != 1<<20 {
		t.Errorf("event stream %+v", c)
	}
	publish := func(tenant string, i int) error {
		_, err := n.js.Publish(ctx, fmt.Sprintf("sbx.runs.%s", tenant), []byte("{}"), jetstream.WithMsgID(fmt.Sprintf("%s-%d", tenant, i)))
		return err
	}
	for i := range 3 {
		if err := publish("a", i); err != nil {
			t.Fatalf("run %d of tenant a: %v", i, err)
		}
	}
	if err := publish("a", 3); err == nil {
		t.Fatal("a fourth run of tenant a was queued past --tenant-max-queue 3")
	}
	for i := range 2 {
		if err := publish("b", i); err != nil {
			t.Fatalf("run %d of tenant b: %v", i, err)
		}
	}
	if err := publish("c", 0); err == nil {
		t.Fatal("a sixth run was queued past --cluster-max-queue 5")
	}
	if st, err = n.State(ctx); err != nil || st.Queued != 5 {
		t.Fatalf("status after 5 runs: %+v, %v", st, err)
	}
}

// freeAddr is a loopback HOST:PORT nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Three embedded members listed in each other's routes form one NATS cluster: the streams
// keep three copies, and each member lists all three.
func TestThreeEmbeddedNodesFormOneCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	peers := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	nodes := threeMembers(t, ctx, func(i int) Config { return Config{PeerListen: peers[i], Routes: peers} })
	ri, err := nodes[0].runs.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ri.Config.Replicas != 3 || ri.Cluster == nil || len(ri.Cluster.Replicas) != 2 {
		t.Fatalf("run queue: %d replicas, cluster %+v", ri.Config.Replicas, ri.Cluster)
	}
	for deadline := time.Now().Add(joinBound); ; time.Sleep(20 * time.Millisecond) {
		st, err := nodes[2].State(ctx)
		if err == nil && len(st.Nodes) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("member n2 lists %+v (%v), want three nodes", st.Nodes, err)
		}
	}
}

// threeMembers joins three embedded members n0 to n2 at once (a member waits for a quorum),
// each with two free slots, their own state directory and client port, and what config(i)
// says besides; they close when t ends.
func threeMembers(t *testing.T, ctx context.Context, config func(i int) Config) []*Node {
	t.Helper()
	nodes := make([]*Node, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		c := config(i)
		c.Embedded, c.DataDir, c.Listen, c.NodeID = true, t.TempDir(), "127.0.0.1:0", fmt.Sprintf("n%d", i)
		wg.Go(func() {
			nodes[i], errs[i] = Join(ctx, c, func() Presence { return Presence{Slots: 2, Free: 2} })
		})
	}
	wg.Wait()
	for i, n := range nodes {
		if errs[i] != nil {
			t.Fatalf("member %d: %v", i, errs[i])
		}
		t.Cleanup(n.Close)
	}
	return nodes
}

// A node that cannot reach its external cluster says where it tried, without the password its
// URL held.
func TestJoinErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	_, err := Join(ctx, Config{URLs: []string{"nats://bob:s3cret@127.0.0.1:1"}}, nil)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "bob@127.0.0.1:1") {
		t.Fatalf("%v: want an error naming bob@127.0.0.1:1 without the password", err)
	}
}

// An external NATS without JetStream is refused at once, saying so, rather than waited for.
func TestJoinRefusesANATSWithoutJetStream(t *testing.T) {
	plain, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go plain.Start()
	t.Cleanup(plain.Shutdown)
	if !plain.ReadyForConnections(serverReady) {
		t.Fatal("the plain NATS server does not listen")
	}
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	_, err = Join(ctx, Config{URLs: []string{plain.ClientURL()}}, nil)
	if err == nil || !strings.Contains(err.Error(), "do not run JetStream") || ctx.Err() != nil {
		t.Fatalf("%v: want a prompt error saying the servers do not run JetStream", err)
	}
}
