package main

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/pgserver/pgtest"
)

// serve refuses cluster flags that cannot make a node, before it opens anything, saying what
// to pass.
func TestServeClusterFlagsSayWhatToPass(t *testing.T) {
	dir := t.TempDir()
	pg := "--database=postgres://u@127.0.0.1:1/db"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--cluster", "embedded", "--data-dir", dir}, "pass --database postgres://"},
		{[]string{"serve", "--cluster", "embedded", pg}, "needs --data-dir DIR beside --database"},
		{[]string{"serve", "--cluster", "embedded", "--no-store"}, "pass --database postgres://"},
		{[]string{"serve", "--cluster", "embedded", pg, "--data-dir", dir, "--cluster-peer-listen", "127.0.0.1:7001",
			"--cluster-routes", "127.0.0.1:7001,127.0.0.1:7002"}, "a cluster of two members loses its quorum"},
		{[]string{"serve", "--cluster", "embedded", pg, "--data-dir", dir, "--cluster-replicas", "3"}, "but the cluster has 1 member"},
		{[]string{"serve", "--cluster", "nats//a:4222", pg, "--data-dir", dir}, "is not a nats:// or tls:// URL"},
		{[]string{"serve", "--node-id", "n1"}, "--node-id only applies with --cluster"},
		{[]string{"serve", "--keep-events", "1m"}, "--keep-events only applies with --cluster"},
	} {
		r := cli(t, "", c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("skillbox %s: %s\nwant exit %d saying %q", strings.Join(c.args, " "), r, exitUsage, c.want)
		}
	}
}

// serve --cluster embedded over a PostgreSQL is a cluster of one: it says so, and GET
// /v1/cluster lists its node and its run slots.
func TestServeClusterOfOne(t *testing.T) {
	dsn, err := pgtest.Start(t).NewDatabaseURL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := startServe(t, binary(t), true, "serve", "--addr", "127.0.0.1:0", "--skills", t.TempDir(), "--database", dsn,
		"--data-dir", t.TempDir(), "--cluster", "embedded", "--cluster-listen", "127.0.0.1:0", "--node-id", "solo", "--max-runs", "3")
	if !strings.Contains(p.stderr(), `node solo of cluster "sbx"`) {
		t.Errorf("serve does not say it is a node:\n%s", p.stderr())
	}
	code, body, _ := httpDo(t, "GET", p.base+"/v1/cluster", "")
	var st struct {
		Node  string `json:"node"`
		Nodes []struct {
			Node  string `json:"node"`
			Slots int    `json:"slots"`
			Free  int    `json:"free"`
		} `json:"nodes"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Node != "solo" || len(st.Nodes) != 1 || st.Nodes[0].Slots != 3 || st.Nodes[0].Free != 3 {
		t.Fatalf("GET /v1/cluster: %d %s", code, body)
	}
	// SIGTERM leaves the cluster with the rest: the node takes its word back, exit 0.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(hangTimeout); code != 0 {
		t.Fatalf("serve --cluster exited %d after SIGTERM:\n%s", code, p.stderr())
	}
}
