package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/cluster"
	"github.com/skillbox-dev/skillbox/runtime"
)

// A node of a cluster holds its runs in the history on a shorter lease than a single process
// (30 s, swept every minute): a node that dies leaves runs other nodes' clients watch. It
// renews every third of the lease, one update per node.
const (
	clusterLease = 10 * time.Second
	clusterSweep = 2 * time.Second
)

// clusterFlags are serve's flags for running as one node of a cluster on NATS JetStream (see
// docs/cluster.md). Without --cluster none of them may be given, and no NATS code runs.
func clusterFlags(fs *pflag.FlagSet, e *env) {
	c := &e.cluster
	fs.StringVar(&e.clusterMode, "cluster", "", "run as one node of a cluster: `embedded` (this process runs a NATS server, its JetStream files in --data-dir) or the nats://HOST:PORT,... URLs of an external NATS cluster; needs --database postgres://...: any node answers for any run, runs queue for the node with room, installs and quotas hold on every node (docs/cluster.md)")
	fs.StringVar(&c.Listen, "cluster-listen", "", "with --cluster embedded: the embedded NATS server's client `HOST:PORT` (default "+cluster.DefaultListen+")")
	fs.StringVar(&c.PeerListen, "cluster-peer-listen", "", "with --cluster embedded: the `HOST:PORT` this member's NATS routes listen on (none: a cluster of one)")
	fs.StringSliceVar(&c.Routes, "cluster-routes", nil, "with --cluster embedded: the route `HOST:PORT`s of every member, itself included or not, comma-separated; three members form one cluster")
	fs.StringVar(&c.Creds, "cluster-creds", "", "with --cluster nats://...: the NATS credentials `FILE`")
	fs.StringVar(&c.NodeID, "node-id", "", "this node's `NAME` in the cluster (default: the host name and 4 random bytes)")
	fs.StringVar(&c.Name, "cluster-name", "", "the `NAME` that prefixes every stream, bucket and subject, so deployments can share NATS (default "+cluster.DefaultName+")")
	fs.IntVar(&c.Replicas, "cluster-replicas", 0, "copies of each stream: `N` = 1, 3 or 5, no more than the members (default 3 with three or more members, else 1)")
	fs.DurationVar(&c.AckWait, "run-ack-wait", 0, "how long a run's delivery waits for its node before another node may take it (default "+cluster.DefaultAckWait.String()+")")
	fs.Int64Var(&c.MaxQueue, "cluster-max-queue", 0, fmt.Sprintf("the most runs waiting in the cluster in all (default %d)", cluster.DefaultMaxQueue))
	fs.Int64Var(&c.TenantMaxQueue, "tenant-max-queue", 0, fmt.Sprintf("the most runs of one tenant waiting in the cluster (default %d)", cluster.DefaultTenantMaxQueue))
	fs.DurationVar(&c.KeepEvents, "keep-events", 0, "how long a run's events stay readable, from any node (default "+cluster.DefaultKeepEvents.String()+")")
	fs.Var((*byteSize)(&c.MaxEventBytes), "max-event-bytes", "what the event stream holds in all, such as 1GiB (the default)")
}

// checkCluster says what is wrong with the cluster flags, before anything is opened: the
// modes need a PostgreSQL every node shares, and the node's own state directory beside it.
func (e *env) checkCluster() error {
	if e.clusterMode == "" {
		c := e.cluster
		for _, f := range []struct {
			name string
			set  bool
		}{{"--cluster-listen", c.Listen != ""}, {"--cluster-peer-listen", c.PeerListen != ""}, {"--cluster-routes", len(c.Routes) > 0},
			{"--cluster-creds", c.Creds != ""}, {"--node-id", c.NodeID != ""}, {"--cluster-name", c.Name != ""},
			{"--cluster-replicas", c.Replicas != 0}, {"--run-ack-wait", c.AckWait != 0}, {"--cluster-max-queue", c.MaxQueue != 0},
			{"--tenant-max-queue", c.TenantMaxQueue != 0}, {"--keep-events", c.KeepEvents != 0}, {"--max-event-bytes", c.MaxEventBytes != 0}} {
			if f.set {
				return fmt.Errorf("%s only applies with --cluster (embedded, or the nats:// URLs of a cluster)", f.name)
			}
		}
		return nil
	}
	if e.noStore || e.database == "" {
		return fmt.Errorf("--cluster keeps the run history and skill versions in PostgreSQL, which every node shares (SQLite is one machine's file): pass --database postgres://user:password@host:5432/db")
	}
	if e.dataDir == "" {
		return fmt.Errorf("--cluster needs --data-dir DIR beside --database: the node's own state (JetStream's files with --cluster embedded, the spool of run records)")
	}
	e.cluster.Embedded, e.cluster.URLs = cluster.ParseMode(e.clusterMode)
	e.cluster.DataDir = e.dataDir
	e.cluster = e.cluster.WithDefaults()
	return e.cluster.Check()
}

// joinCluster makes serve a node of the cluster its flags name (nil without --cluster): the
// node says what rt's admission has free.
func (e *env) joinCluster(ctx context.Context, rt *runtime.Runtime, logger *slog.Logger) (*cluster.Node, error) {
	if e.clusterMode == "" {
		return nil, nil
	}
	e.cluster.Logger = logger.With("cluster", e.cluster.Name)
	node, err := cluster.Join(ctx, e.cluster, func() cluster.Presence {
		a := rt.AdmissionStats()
		return cluster.Presence{Version: moduleVersion(), Slots: a.MaxRuns, Free: max(a.MaxRuns-a.Running, 0), FreeMemory: max(a.MemoryBudget-a.MemoryInUse, 0)}
	})
	if err != nil {
		return nil, err
	}
	return node, nil
}

// share makes a tenant's Runtime share its installs and its quota with the cluster's other
// nodes through node.
func share(rt *runtime.Runtime, node *cluster.Node) error {
	if err := rt.ShareInstalls(node); err != nil {
		return err
	}
	return rt.ShareQuota(node)
}
