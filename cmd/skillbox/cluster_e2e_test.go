//go:build clustere2e

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/pgserver/pgtest"
)

// The cluster's end-to-end test (make test-cluster): PostgreSQL and three real
// `skillbox serve --cluster embedded` processes on loopback, each with one run slot, a short
// ack wait and a memory budget of its own (three replicas of half the machine would overcommit
// it). It checks, through the HTTP API only, what any replica must answer for any run.
func TestClusterEndToEnd(t *testing.T) {
	dsn, err := pgtest.Start(t).NewDatabaseURL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	skills := tickerSkills(t)
	echoUpload = multipartOf(t, map[string][]byte{
		"skill.json":   []byte(`{"id":"echoed","name":"echoed","description":"answers its arguments","parameters":{"type":"object"}}`),
		"execute.wasm": mustRead(t, filepath.Join("..", "..", "testdata", "wasm", "echo.wasm")),
	})
	bin := binary(t)
	nodes, args := clusterOf3(t, bin, dsn, skills, "--max-runs", "1")
	t.Cleanup(func() { // what every node said, when anything failed
		if t.Failed() {
			for i, p := range nodes {
				t.Logf("n%d:\n%s", i, p.stderr())
			}
		}
	})

	// Cancel on another replica, events resumed on a third.
	endless := `{"args":{"count":100000000,"ms":20}}`
	run := submit(t, nodes[0], endless, "running")
	evs := readEvents(t, nodes[1].base+"/v1/runs/"+run+"/events", "", 4)
	if evs[0] != "1:status" || evs[3] != "4:log" {
		t.Fatalf("events on another replica: %v", evs)
	}
	asked := time.Now()
	if code, body, _ := httpDo(t, "POST", nodes[2].base+"/v1/runs/"+run+"/cancel", ""); code != 202 {
		t.Fatalf("cancel on a third replica: %d %s", code, body)
	}
	rest := readEvents(t, nodes[1].base+"/v1/runs/"+run+"/events", "4", 0)
	t.Logf("cancel asked on one replica, its result read on another %v later", time.Since(asked).Round(time.Millisecond))
	if !strings.HasPrefix(rest[0], "5:") || !strings.HasSuffix(rest[len(rest)-1], ":result") {
		t.Fatalf("resumed after 4 on another replica: %v", rest)
	}

	// An install on one replica runs at once on another, and the third follows; so does a
	// removal.
	installed := time.Now()
	upload := func(p *serveProc, method, url string) string {
		t.Helper()
		code, body, _ := httpDo(t, method, p.base+url, echoUpload.body, "Content-Type", echoUpload.ctype)
		if code/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, url, code, body)
		}
		return body
	}
	upload(nodes[0], "POST", "/v1/skills")
	if code, body, _ := httpDo(t, "POST", nodes[2].base+"/v1/skills/echoed/runs", `{"args":{"n":1}}`, "Content-Type", "application/json"); code != 200 || !strings.Contains(body, `"success":true`) {
		t.Fatalf("a run at once on another replica of a skill just installed: %d %s", code, body)
	}
	ranAt := time.Since(installed)
	if !within(hangTimeout, func() bool { code, _, _ := httpDo(t, "GET", nodes[1].base+"/v1/skills/echoed", ""); return code == 200 }) {
		t.Fatal("the third replica never installed the skill")
	}
	t.Logf("installed on one replica: ran on another %v after the upload began; listed on the third %v after", ranAt.Round(time.Millisecond), time.Since(installed).Round(time.Millisecond))
	removed := time.Now()
	if code, body, _ := httpDo(t, "DELETE", nodes[1].base+"/v1/skills/echoed", ""); code/100 != 2 {
		t.Fatalf("delete on the third replica: %d %s", code, body)
	}
	for _, p := range []*serveProc{nodes[0], nodes[2]} {
		if !within(hangTimeout, func() bool { code, _, _ := httpDo(t, "GET", p.base+"/v1/skills/echoed", ""); return code == 404 }) {
			t.Fatalf("%s still lists the skill removed elsewhere", p.base)
		}
	}
	t.Logf("removed on one replica: gone from the others %v later", time.Since(removed).Round(time.Millisecond))

	// Every slot taken: a run goes to the cluster's queue, and runs where a slot frees.
	busy := []string{submit(t, nodes[0], endless, "running"), submit(t, nodes[1], endless, "running"), submit(t, nodes[2], endless, "running")}
	queued := submit(t, nodes[0], endless, "queued")
	if code, body, _ := httpDo(t, "POST", nodes[0].base+"/v1/runs/"+busy[1]+"/cancel", ""); code != 202 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	started := readEvents(t, nodes[0].base+"/v1/runs/"+queued+"/events", "", 2) // the node that queued it
	if started[0] != "1:status" || started[1] != "2:status" {
		t.Fatalf("the queued run's events: %v", started)
	}
	// It runs on the node whose slot freed; kill that node: the run started, so it is not run
	// again but interrupted, with its result, once the ack wait gives it to another node.
	if err := nodes[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	nodes[1].wait(hangTimeout)
	if code, body, _ := httpDo(t, "POST", nodes[2].base+"/v1/runs/"+busy[2]+"/cancel", ""); code != 202 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	end := readEvents(t, nodes[0].base+"/v1/runs/"+queued+"/events", "2", 0)
	took := time.Since(killed)
	t.Logf("a started run of a killed node ended interrupted %v after the kill (ack wait 2s)", took.Round(time.Millisecond))
	if took > 15*time.Second { // not a failure: what the nodes said, to see where the time went
		t.Logf("n0:\n%s\nn2:\n%s", nodes[0].stderr(), nodes[2].stderr())
	}
	last := end[len(end)-1]
	if !strings.HasSuffix(last, ":result") {
		t.Fatalf("the killed node's run: %v\nn0:\n%s\nn2:\n%s", end, nodes[0].stderr(), nodes[2].stderr())
	}
	code, body, _ := httpDo(t, "GET", nodes[0].base+"/v1/runs/"+queued, "")
	if code != 200 || !strings.Contains(body, `"status":"interrupted"`) {
		t.Fatalf("the killed node's run in the history: %d %s", code, body)
	}

	// The killed node comes back with its state, takes a run of its own (never queued), and is
	// killed again: the run ends interrupted, by the history's lease, and a watch on another
	// node ends with its result.
	nodes[1] = startServe(t, bin, false, args[1]...)
	waitServing(t, nodes[1])
	local := submit(t, nodes[1], endless, "running")
	readEvents(t, nodes[0].base+"/v1/runs/"+local+"/events", "", 2) // it started
	if err := nodes[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = time.Now()
	nodes[1].wait(hangTimeout)
	if !within(hangTimeout, func() bool {
		_, body, _ := httpDo(t, "GET", nodes[2].base+"/v1/runs/"+local, "")
		return strings.Contains(body, `"status":"interrupted"`)
	}) {
		t.Fatalf("the run the killed node took itself never ended interrupted\nn0:\n%s", nodes[0].stderr())
	}
	t.Logf("a run its node admitted itself ended interrupted %v after the node was killed (lease 10s, swept every 2s)", time.Since(killed).Round(time.Millisecond))
	if end := readEvents(t, nodes[0].base+"/v1/runs/"+local+"/events", "2", 0); !strings.HasSuffix(end[len(end)-1], "result") {
		t.Fatalf("the watch of the killed node's own run: %v", end)
	}
	t.Logf("and its watch on another node ended %v after the kill", time.Since(killed).Round(time.Millisecond))
}

// tickerSkills is a skills directory holding ticker (logs a tick count times, ms apart; its
// timeout 120 s).
func tickerSkills(t *testing.T) string {
	t.Helper()
	skills := t.TempDir()
	dir := filepath.Join(skills, "ticker")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"id":"ticker","name":"ticker","description":"logs a tick count times, ms apart","parameters":{"type":"object"},"limits":{"timeoutMs":120000}}`
	writeFile(t, filepath.Join(dir, "skill.json"), manifest)
	writeFile(t, filepath.Join(dir, "execute.wasm"), string(mustRead(t, filepath.Join("..", "..", "testdata", "wasm", "ticker.wasm"))))
	return skills
}

// A tenant's quota holds across the three replicas, however its runs are spread: with
// concurrentRuns 2, runs in flight on two replicas leave the third no room for the tenant,
// though it has free slots, until one of them ends; with runsPerMinute 1, a run on one replica
// spends the minute's run on all.
func TestClusterQuotaAcrossReplicas(t *testing.T) {
	dsn, err := pgtest.Start(t).NewDatabaseURL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"acme", "beta"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "tenants.yaml"), "- {name: acme, skills: ./acme, shared: true, quota: {concurrentRuns: 2}}\n"+
		"- {name: beta, skills: ./beta, shared: true, quota: {runsPerMinute: 1}}\n")
	const operator = "operator-key-0123456789"
	writeFile(t, filepath.Join(dir, "keys.yaml"), "- {name: op, key: "+operator+", role: admin}\n"+
		"- {name: acme-runner, key: acme-runner-key-0123456789, role: runner, tenant: acme}\n"+
		"- {name: beta-runner, key: beta-runner-key-0123456789, role: runner, tenant: beta}\n")
	nodes, _ := clusterOf3As(t, binary(t), dsn, tickerSkills(t), operator, "--max-runs", "2",
		"--tenants", filepath.Join(dir, "tenants.yaml"), "--keys", filepath.Join(dir, "keys.yaml"))
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range nodes {
				t.Logf("n%d:\n%s", i, p.stderr())
			}
		}
	})
	acme := []string{"X-API-Key", "acme-runner-key-0123456789", "Content-Type", "application/json"}
	endless := `{"args":{"count":100000000,"ms":20}}`
	var held []string
	for _, p := range nodes[:2] {
		code, body, _ := httpDo(t, "POST", p.base+"/v1/skills/ticker/runs?async=true", endless, acme...)
		var a struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		}
		if code != 202 || json.Unmarshal([]byte(body), &a) != nil || a.Status != "running" {
			t.Fatalf("acme's run on %s: %d %s", p.base, code, body)
		}
		held = append(held, a.RunID)
	}
	quick := `{"args":{"count":1,"ms":1}}`
	if code, body, _ := httpDo(t, "POST", nodes[2].base+"/v1/skills/ticker/runs", quick, acme...); code != 429 || !strings.Contains(body, "quota_exceeded") {
		t.Fatalf("acme's third run at once, on the third replica: %d %s, want 429 quota_exceeded", code, body)
	}
	if code, body, _ := httpDo(t, "POST", nodes[2].base+"/v1/runs/"+held[0]+"/cancel", "", acme...); code != 202 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	if !within(hangTimeout, func() bool {
		code, _, _ := httpDo(t, "POST", nodes[2].base+"/v1/skills/ticker/runs", quick, acme...)
		return code == 200
	}) {
		t.Fatal("the third replica never ran acme's run once one of its two ended")
	}
	httpDo(t, "POST", nodes[0].base+"/v1/runs/"+held[1]+"/cancel", "", acme...)

	beta := []string{"X-API-Key", "beta-runner-key-0123456789", "Content-Type", "application/json"}
	began := time.Now()
	if code, body, _ := httpDo(t, "POST", nodes[0].base+"/v1/skills/ticker/runs", quick, beta...); code != 200 {
		t.Fatalf("beta's run of the minute: %d %s", code, body)
	}
	for _, p := range nodes[1:] {
		code, body, _ := httpDo(t, "POST", p.base+"/v1/skills/ticker/runs", quick, beta...)
		if code == 429 && strings.Contains(body, "quota_exceeded") {
			continue
		}
		if time.Since(began) < time.Minute { // past a minute the bucket has a run again
			t.Fatalf("beta's second run of the minute, on %s: %d %s, want 429 quota_exceeded", p.base, code, body)
		}
		t.Logf("beta's runs took over a minute: a second run was allowed (%d)", code)
	}
}

// echoUpload is the multipart body of an upload of the skill echoed.
var echoUpload struct{ body, ctype string }

// multipartOf is files as a multipart form, one file field each, and its content type.
func multipartOf(t *testing.T, files map[string][]byte) struct{ body, ctype string } {
	t.Helper()
	var buf strings.Builder
	w := multipart.NewWriter(&buf)
	for name, data := range files {
		fw, err := w.CreateFormFile(name, name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return struct{ body, ctype string }{buf.String(), w.FormDataContentType()}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// clusterStatus is what the test reads of GET /v1/cluster.
type clusterStatus struct {
	Replicas int `json:"replicas"`
	Nodes    []struct {
		Node string `json:"node"`
	} `json:"nodes"`
	QueueLeader string `json:"queue_leader"`
}

// clusterOf3 starts three `skillbox serve --cluster embedded` processes over PostgreSQL at dsn,
// n0 to n2, each with its own upload directory over skills, a run ack wait of 2 s, a memory
// budget of its own and the extra flags, and waits until each lists the three. It returns them
// and their arguments, to start one again.
func clusterOf3(t *testing.T, bin, dsn, skills string, extra ...string) ([]*serveProc, [][]string) {
	t.Helper()
	return clusterOf3As(t, bin, dsn, skills, "", extra...)
}

// clusterOf3As is clusterOf3 for nodes that take API keys: key is an admin key of the default
// tenant, which reads GET /v1/cluster.
func clusterOf3As(t *testing.T, bin, dsn, skills, key string, extra ...string) ([]*serveProc, [][]string) {
	t.Helper()
	routes := []string{freePort(t), freePort(t), freePort(t)}
	nodes := make([]*serveProc, 3)
	args := make([][]string, 3)
	for i := range nodes {
		// Each its own first skills directory, where uploads go, over the skills shipped with all.
		args[i] = append([]string{"serve", "--addr", "127.0.0.1:0", "--skills", t.TempDir(), "--skills", skills, "--database", dsn,
			"--data-dir", t.TempDir(), "--cluster", "embedded", "--cluster-listen", "127.0.0.1:0",
			"--cluster-peer-listen", routes[i], "--cluster-routes", strings.Join(routes, ","), "--node-id", fmt.Sprintf("n%d", i),
			"--run-ack-wait", "2s", "--memory-budget", "768MiB", "--compile-memory", "256MiB"}, extra...)
		nodes[i] = startServe(t, bin, false, args[i]...)
	}
	for _, p := range nodes {
		waitServing(t, p)
	}
	var st clusterStatus
	if !within(hangTimeout, func() bool {
		var auth []string
		if key != "" {
			auth = []string{"X-API-Key", key}
		}
		code, body, _ := httpDo(t, "GET", nodes[2].base+"/v1/cluster", "", auth...)
		return code == 200 && json.Unmarshal([]byte(body), &st) == nil && len(st.Nodes) == 3
	}) || st.Replicas != 3 {
		t.Fatalf("the cluster: %+v", st)
	}
	return nodes, args
}

// submit starts ticker asynchronously on p with body and wants 202 with status; it returns the
// run's id.
func submit(t *testing.T, p *serveProc, body, status string) string {
	t.Helper()
	code, out, _ := httpDo(t, "POST", p.base+"/v1/skills/ticker/runs?async=true", body, jsonType...)
	var a struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if code != 202 || json.Unmarshal([]byte(out), &a) != nil || a.Status != status {
		t.Fatalf("async run on %s: %d %s, want 202 %s", p.base, code, out, status)
	}
	return a.RunID
}

// readEvents reads a run's events as "id:name" from url, after Last-Event-ID after (none when
// empty), until n of them (0: to its result). A stream that ends before is resumed after the
// last id it gave, as EventSource does.
func readEvents(t *testing.T, url, after string, n int) []string {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(hangTimeout); time.Now().Before(deadline); {
		more, done := readStream(t, url, after, n-len(got), deadline)
		got = append(got, more...)
		if done || n > 0 && len(got) >= n {
			return got
		}
		if len(more) > 0 {
			after, _, _ = strings.Cut(more[len(more)-1], ":")
		}
		t.Logf("the events of %s ended before the result: resuming after %q", url, after)
	}
	t.Fatalf("GET %s: %v, and no result within %v", url, got, hangTimeout)
	return nil
}

// readStream reads one connection of readEvents: at most n events (0: any), and whether the
// last was the result.
func readStream(t *testing.T, url, after string, n int, deadline time.Time) ([]string, bool) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	if after != "" {
		req.Header.Set("Last-Event-ID", after)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	var got []string
	id := ""
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			name := strings.TrimPrefix(line, "event: ")
			got = append(got, id+":"+name)
			id = ""
			if name == "result" {
				return got, true
			}
			if n > 0 && len(got) == n {
				return got, false
			}
		}
	}
	return got, false
}

// waitServing waits until p says it serves, and sets its base URL.
func waitServing(t testing.TB, p *serveProc) {
	t.Helper()
	if !within(hangTimeout, func() bool {
		m := servingLine.FindStringSubmatch(p.stderr())
		if m != nil {
			p.base = "http://" + m[2]
		}
		return m != nil
	}) {
		t.Fatalf("serve did not listen:\n%s", p.stderr())
	}
}

// within polls cond every 50ms until it holds or d passes.
func within(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// freePort is a loopback HOST:PORT nothing listens on now.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
