// Package cluster makes a Skillbox replica one node of a cluster on NATS JetStream, with
// PostgreSQL as the truth: the NATS server a replica embeds (or the external cluster it joins),
// the streams and buckets the nodes share, each bounded, and the nodes' presence. It is its own
// package so that a single-node server and an embedder link no NATS: the runtime never imports
// it (its deps test says so), and serve starts it only with --cluster.
package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// Config is one node's part in a cluster. The zero value of each bound is its default.
type Config struct {
	// Embedded runs nats-server in this process, its JetStream files under DataDir; otherwise
	// URLs are the servers of an external NATS cluster, with Creds when it needs them.
	Embedded bool
	URLs     []string
	Creds    string
	// Listen is the embedded server's client port (default 127.0.0.1:4222); PeerListen its
	// route port, and Routes the route ports of every member, itself included or not. Without
	// PeerListen the server is a cluster of one.
	Listen     string
	PeerListen string
	Routes     []string
	// PeerAdvertise is the route address the other members reach this one at, when it is not
	// PeerListen (behind NAT, a load balancer or a proxy): members learn each other's routes
	// from one another, and would otherwise dial PeerListen. In Routes it is this member.
	PeerAdvertise string
	// DataDir is the node's own state directory: JetStream's files go in DataDir/nats.
	DataDir string
	// NodeID names this node (default: the host name and 4 random bytes); Name prefixes every
	// stream, bucket and subject (default "sbx"), so two deployments can share an account.
	NodeID string
	Name   string
	// Replicas is how many copies of each stream and bucket the cluster keeps: 0 is 3 with
	// three or more members, else 1.
	Replicas int
	// AckWait is how long a run's delivery waits for its node's heartbeat before it is
	// delivered again (default 5 s).
	AckWait time.Duration
	// MaxQueue bounds the runs waiting in all (default 10,000); TenantMaxQueue those of one
	// tenant (default 64).
	MaxQueue       int64
	TenantMaxQueue int64
	// KeepEvents is how long a run's events are kept (default 5 minutes); MaxEventBytes bounds
	// what the event stream holds in all (default 1 GiB).
	KeepEvents    time.Duration
	MaxEventBytes int64
	// Logger receives the node's own messages; nil discards them.
	Logger *slog.Logger
}

// Defaults of Config's bounds.
const (
	DefaultListen         = "127.0.0.1:4222"
	DefaultName           = "sbx"
	DefaultAckWait        = 5 * time.Second
	DefaultMaxQueue       = 10_000
	DefaultTenantMaxQueue = 64
	DefaultKeepEvents     = 5 * time.Minute
	DefaultMaxEventBytes  = 1 << 30
)

// ErrConfig is what every error of Config.Check wraps.
var ErrConfig = errors.New("cluster")

// validName reports whether s may name a cluster or a node: 1 to 64 of nameRune's characters,
// since it goes into stream, bucket and subject names. (Not a regexp: this package's init runs
// in every skillbox command.)
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !nameRune(r) {
			return false
		}
	}
	return true
}

// nameRune reports whether r may be in a name: an ASCII letter or digit, - or _.
func nameRune(r rune) bool {
	return r == '-' || r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
}

// WithDefaults is c with every zero bound its default, and a node id when it has none.
func (c Config) WithDefaults() Config {
	if c.Embedded && c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.NodeID == "" {
		c.NodeID = defaultNodeID()
	}
	if c.Replicas == 0 {
		c.Replicas = 1
		if c.members() >= 3 {
			c.Replicas = 3
		}
	}
	if c.AckWait <= 0 {
		c.AckWait = DefaultAckWait
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = DefaultMaxQueue
	}
	if c.TenantMaxQueue <= 0 {
		c.TenantMaxQueue = DefaultTenantMaxQueue
	}
	if c.KeepEvents <= 0 {
		c.KeepEvents = DefaultKeepEvents
	}
	if c.MaxEventBytes <= 0 {
		c.MaxEventBytes = DefaultMaxEventBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// members counts the cluster's NATS servers: the embedded server and the other routes, or the
// external servers.
func (c Config) members() int {
	if !c.Embedded {
		return len(c.URLs)
	}
	seen := map[string]bool{}
	self := func(a string) bool { return a == c.PeerListen || a == c.PeerAdvertise }
	for _, r := range c.Routes {
		if !self(r) {
			seen[r] = true
		}
	}
	return len(seen) + 1
}

// Check says what is wrong with c (after WithDefaults), naming the flag and the fix.
func (c Config) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
	}
	if !validName(c.Name) {
		return bad("--cluster-name %q: use 1 to 64 letters, digits, - and _ (it prefixes streams and subjects)", c.Name)
	}
	if !validName(c.NodeID) {
		return bad("--node-id %q: use 1 to 64 letters, digits, - and _", c.NodeID)
	}
	if c.Embedded {
		if c.DataDir == "" {
			return bad("--cluster embedded keeps JetStream's files in the node's own state directory: pass --data-dir")
		}
		for _, a := range append([]string{c.Listen, c.PeerListen, c.PeerAdvertise}, c.Routes...) {
			if a == "" {
				continue
			}
			if _, _, err := net.SplitHostPort(a); err != nil {
				return bad("%q is not HOST:PORT: %v", a, err)
			}
		}
		if len(c.Routes) > 0 && c.PeerListen == "" {
			return bad("--cluster-routes needs --cluster-peer-listen HOST:PORT, the port this member's routes listen on")
		}
	} else {
		if len(c.URLs) == 0 {
			return bad("--cluster takes embedded or the nats://HOST:PORT URLs of an external cluster, comma-separated")
		}
		for _, u := range c.URLs {
			if !strings.HasPrefix(u, "nats://") && !strings.HasPrefix(u, "tls://") {
				return bad("%q is not a nats:// or tls:// URL", u)
			}
		}
	}
	if n := c.members(); n == 2 {
		return bad("a cluster of two members loses its quorum when either dies, and stops: run one member, or three")
	}
	switch {
	case c.Replicas == 2:
		return bad("--cluster-replicas 2 loses its quorum when either copy's member dies: use 1 or 3")
	case c.Replicas < 1 || c.Replicas > 5:
		return bad("--cluster-replicas %d: use 1, 3 or 5", c.Replicas)
	case c.Embedded && c.Replicas > c.members():
		return bad("--cluster-replicas %d, but the cluster has %d member(s): list every member in --cluster-routes, or keep fewer copies", c.Replicas, c.members())
	}
	if c.AckWait < 100*time.Millisecond {
		return bad("--run-ack-wait %v: use 100ms or more (its node heartbeats every third of it)", c.AckWait)
	}
	if c.TenantMaxQueue > c.MaxQueue {
		return bad("--tenant-max-queue %d is more than --cluster-max-queue %d", c.TenantMaxQueue, c.MaxQueue)
	}
	return nil
}

// defaultNodeID is the host name (its characters a name may hold) and 4 random bytes.
func defaultNodeID() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if nameRune(r) {
			return r
		}
		return '-'
	}, host)
	host = host[:min(len(host), 48)]
	if host == "" {
		host = "node"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}

// ParseMode reads --cluster: "embedded", or the comma-separated URLs of an external cluster.
func ParseMode(v string) (embedded bool, urls []string) {
	if v == "embedded" {
		return true, nil
	}
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	return false, urls
}
