package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/cluster"
	"github.com/skillbox-dev/skillbox/runtime"
)

// GET /v1/cluster answers a node's cluster to the operator's admin keys only, and a server that
// is no node says so.
func TestClusterEndpoint(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	node, err := cluster.Join(ctx, cluster.Config{Embedded: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", NodeID: "here"},
		func() cluster.Presence { return cluster.Presence{Slots: 3, Free: 2} })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	const (
		admin  = "admin-key-0123456789abcdef"
		viewer = "viewer-key-0123456789abcdef"
		user   = "user-admin-0123456789abcdef"
	)
	keys := []APIKey{{Name: "ops", Key: admin, Role: access.RoleAdmin}, {Name: "look", Key: viewer, Role: access.RoleViewer},
		{Name: "alice", Key: user, Role: access.RoleAdmin, User: "alice"}}
	status := func(ctx context.Context) (any, error) { return node.Status(ctx) }
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", ""), "hello", nil)
	env := newEnvRuntime(t, Options{Keys: keys, Cluster: status}, runtime.Config{}, dir)
	r := get(t, env.ts.URL+"/v1/cluster", "Authorization", "Bearer "+admin)
	var st cluster.Status
	if r.status != 200 || json.Unmarshal(r.body, &st) != nil {
		t.Fatalf("the operator's admin: %s", r)
	}
	if st.Node != "here" || len(st.Nodes) != 1 || st.Nodes[0].Slots != 3 || st.Nodes[0].Free != 2 || st.Replicas != 1 {
		t.Errorf("status %+v", st)
	}
	wantError(t, get(t, env.ts.URL+"/v1/cluster", "Authorization", "Bearer "+viewer), 403, "forbidden")
	wantError(t, get(t, env.ts.URL+"/v1/cluster", "Authorization", "Bearer "+user), 403, "forbidden")

	alone := newEnvRuntime(t, Options{}, runtime.Config{}, dir)
	wantError(t, get(t, alone.ts.URL+"/v1/cluster"), 404, "not_clustered")
}
