package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/cluster"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// deaf is a replica's view of the cluster that never hears of another's installs: only what it
// asks for itself (a run of a skill it does not know) reaches it.
type deaf struct{ *cluster.Node }

func (deaf) FollowInstalls(ctx context.Context, _ string, _ func(string, string, string, uint64)) error {
	<-ctx.Done()
	return ctx.Err()
}

// installPair is two replicas over one version store and one NATS, each with a skill directory
// of its own; b shares installs through bIns(the node it joined).
func installPair(t *testing.T, bIns func(*cluster.Node) runtime.Installs) (a, b *testEnv) {
	t.Helper()
	hub, other := twoNodes(t)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	replica := func(node *cluster.Node, ins runtime.Installs) *testEnv {
		env := newEnvRuntime(t, Options{Cluster: node}, runtime.Config{Versions: st}, t.TempDir())
		if err := env.rt.ShareInstalls(ins); err != nil {
			t.Fatal(err)
		}
		return env
	}
	return replica(hub, hub), replica(other, bIns(other))
}

// uploaded installs p as greeter on env (method POST creates, PUT replaces) and returns the
// digest of the version recorded.
func uploaded(t *testing.T, env *testEnv, method string, p pkg) string {
	t.Helper()
	url := env.ts.URL + "/v1/skills"
	if method == http.MethodPut {
		url += "/greeter"
	}
	r := upload(t, method, url, p, nil)
	var out struct {
		Version struct{ Digest string } `json:"recorded_version"`
	}
	if r.status/100 != 2 || json.Unmarshal(r.body, &out) != nil || out.Version.Digest == "" {
		t.Fatalf("%s greeter: %s", method, r)
	}
	return out.Version.Digest
}

// ranOn runs greeter on env (pinned to digest, unless ""), and returns the digest that ran.
func ranOn(t *testing.T, env *testEnv, digest string) string {
	t.Helper()
	body := `{"args":{"n":1}}`
	if digest != "" {
		body = `{"args":{"n":1},"digest":"` + digest + `"}`
	}
	r := post(t, env.ts.URL+"/v1/skills/greeter/runs", body)
	var res run.Result
	if r.status != http.StatusOK || json.Unmarshal(r.body, &res) != nil || !res.Success {
		t.Fatalf("run greeter (pin %q) on the other replica: %s", digest, r)
	}
	return res.Digest
}

// A skill installed on one replica runs at once on a replica that has not heard of it: the run
// asks the catalog, and unpacks the version from the store. A new version pinned by digest
// runs there at once too, though its directory still holds the old one.
func TestClusterInstallRunsAtOnceOnAReplicaThatHasNotHeard(t *testing.T) {
	t.Parallel()
	a, b := installPair(t, func(n *cluster.Node) runtime.Installs { return deaf{n} })
	if r := post(t, b.ts.URL+"/v1/skills/greeter/runs", `{"args":{}}`); r.status != http.StatusNotFound {
		t.Fatalf("a skill installed nowhere: %s", r)
	}
	v1 := uploaded(t, a, http.MethodPost, greeterPkg(t, "1.0.0", "echo"))
	if got := ranOn(t, b, ""); got != v1 {
		t.Fatalf("b ran %s, not the version a installed, %s", got, v1)
	}
	if _, err := os.Stat(filepath.Join(b.dir, "greeter", "skill.json")); err != nil {
		t.Fatalf("b's skill directory: %v", err)
	}
	v2 := uploaded(t, a, http.MethodPut, greeterPkg(t, "2.0.0", "echo"))
	if got := ranOn(t, b, v2); got != v2 {
		t.Fatalf("b ran %s pinned to %s", got, v2)
	}
	if got := ranOn(t, b, v1[:20]); got != v1 {
		t.Fatalf("b ran %s pinned to the first version %s", got, v1)
	}
}

// What one replica installs, replaces and removes, the other follows without being asked.
func TestClusterInstallsFollowEverywhere(t *testing.T) {
	t.Parallel()
	a, b := installPair(t, func(n *cluster.Node) runtime.Installs { return n })
	// holds says env holds greeter at version ver ("": not at all).
	holds := func(env *testEnv, ver string) func() bool {
		return func() bool {
			sk, err := env.rt.Skill("greeter")
			if ver == "" {
				return err != nil
			}
			return err == nil && sk.Version() == ver
		}
	}
	// Installed on b, then replaced and removed on a: both follow each other.
	uploaded(t, b, http.MethodPost, greeterPkg(t, "1.0.0", "echo"))
	if !waitFor(hangGuard, holds(a, "1.0.0")) {
		t.Fatal("a never installed what b did")
	}
	uploaded(t, a, http.MethodPut, greeterPkg(t, "2.0.0", "echo"))
	if !waitFor(hangGuard, holds(b, "2.0.0")) {
		t.Fatal("b never replaced greeter as a did")
	}
	if r := send(t, http.MethodDelete, a.ts.URL+"/v1/skills/greeter", nil); r.status != http.StatusNoContent && r.status != http.StatusOK {
		t.Fatalf("delete: %s", r)
	}
	if !waitFor(hangGuard, holds(b, "")) {
		t.Fatal("b still holds greeter that a removed")
	}
	// The old directory is renamed away at once, and deleted just after.
	if !waitFor(hangGuard, func() bool { return len(leftovers(t, b.dir)) == 0 }) {
		t.Fatalf("b's skill directory keeps %v", leftovers(t, b.dir))
	}
	if r := post(t, b.ts.URL+"/v1/skills/greeter/runs", `{"args":{}}`); r.status != http.StatusNotFound {
		t.Fatalf("a run of the removed skill on b: %s", r)
	}
}

// A run that asks the catalog while the replica's own apply of the note has put the skill's
// directory in place but not yet rescanned (the directory holds the version, the registry does
// not) runs it: it does not answer 404 for a skill that is there.
func TestClusterInstallRunsWhileTheNoteIsBeingApplied(t *testing.T) {
	t.Parallel()
	a, b := installPair(t, func(n *cluster.Node) runtime.Installs { return deaf{n} })
	v1 := uploaded(t, a, http.MethodPost, greeterPkg(t, "1.0.0", "echo"))
	// What the note's apply does before its rescan: the version's directory, in place.
	if err := os.CopyFS(filepath.Join(b.dir, "greeter"), os.DirFS(filepath.Join(a.dir, "greeter"))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.rt.Skill("greeter"); err == nil {
		t.Fatal("the registry has greeter before any rescan: the test shows nothing")
	}
	if got := ranOn(t, b, ""); got != v1 {
		t.Fatalf("b ran %s, not the version a installed, %s", got, v1)
	}
}
