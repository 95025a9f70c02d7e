//go:build clustere2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/pgserver/pgtest"
)

// The NATS server that leads the run queue dies under load (SIGKILL of its replica): publishing
// pauses for the election, and no run that was accepted is lost or done twice. Each run fetches
// a URL of its own from a loopback server that counts the hits, so a run done twice would show;
// runs are sent faster than the two other replicas' slots take them, so the queue is in use
// when its leader dies.
func TestClusterLeaderDeathUnderLoad(t *testing.T) {
	dsn, err := pgtest.Start(t).NewDatabaseURL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hits := map[string]int{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><head><title>hit</title></head></html>")
	})}
	go target.Serve(ln)
	t.Cleanup(func() { target.Close() })

	// The queue holds every run the test sends: how many are accepted must not depend on how
	// fast a busy machine drains it.
	skills, policy := fetcherSkills(t)
	nodes, _ := clusterOf3(t, binary(t), dsn, skills, "--max-runs", "2", "--policy", policy,
		"--cluster-max-queue", "1000", "--tenant-max-queue", "1000")
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range nodes {
				t.Logf("n%d:\n%s", i, p.stderr())
			}
		}
	})
	var st clusterStatus
	if code, body, _ := httpDo(t, "GET", nodes[0].base+"/v1/cluster", ""); code != 200 || json.Unmarshal([]byte(body), &st) != nil || !strings.HasPrefix(st.QueueLeader, "n") {
		t.Fatalf("the queue's leader: %d %s", code, body)
	}
	var leader int
	fmt.Sscanf(st.QueueLeader, "n%d", &leader)
	var others []*serveProc
	for i, p := range nodes {
		if i != leader {
			others = append(others, p)
		}
	}
	for _, p := range others { // compiled before the load
		if code, body, _ := httpDo(t, "POST", p.base+"/v1/skills/fetcher/runs", `{"args":{"url":"http://`+ln.Addr().String()+`/warm"}}`, jsonType...); code != 200 {
			t.Fatalf("warm: %d %s", code, body)
		}
	}

	// Two clients send 150 runs each to the two replicas that live on; the leader is killed
	// after the first 50 of each.
	type accepted struct{ id, token string }
	var (
		amu      sync.Mutex
		runs     []accepted
		refused  = map[int]int{}
		longest  time.Duration
		killOnce sync.Once
		killed   time.Time
		wg       sync.WaitGroup
	)
	for c, p := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				if i == 50 {
					killOnce.Do(func() {
						if err := nodes[leader].cmd.Process.Signal(syscall.SIGKILL); err != nil {
							t.Error(err)
						}
						killed = time.Now()
					})
				}
				token := fmt.Sprintf("/run-%d-%d", c, i)
				began := time.Now()
				code, out, err := postJSON(p.base+"/v1/skills/fetcher/runs?async=true", `{"args":{"url":"http://`+ln.Addr().String()+token+`"}}`)
				if err != nil {
					t.Errorf("run %s: %v", token, err)
					continue
				}
				took := time.Since(began)
				var a struct {
					RunID string `json:"run_id"`
				}
				amu.Lock()
				longest = max(longest, took)
				switch {
				case code == 202 && json.Unmarshal([]byte(out), &a) == nil && a.RunID != "":
					runs = append(runs, accepted{a.RunID, token})
				case code == 429 || code == 503:
					refused[code]++ // not accepted: the client is told to try again
				default:
					t.Errorf("run %s: %d %s", token, code, out)
				}
				amu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	nodes[leader].wait(hangTimeout)
	t.Logf("%d runs accepted, refused %v (503: it could not be reached within 5 s); the longest submission took %v; the load went on %v after the leader was killed",
		len(runs), refused, longest.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	if len(runs) < 150 || refused[429] > 0 {
		t.Fatalf("only %d of 300 runs were accepted (refused %v)", len(runs), refused)
	}
	// Every accepted run ends, once, in the history, with its result event; none ran twice.
	statuses := map[string]int{}
	for i, r := range runs {
		p := others[i%2]
		var rec struct {
			Status string `json:"status"`
		}
		if !within(hangTimeout, func() bool {
			code, body, _ := httpDo(t, "GET", p.base+"/v1/runs/"+r.id, "")
			return code == 200 && json.Unmarshal([]byte(body), &rec) == nil && rec.Status != "running" && rec.Status != "queued"
		}) {
			t.Fatalf("run %s (%s) never ended: %q", r.id, r.token, rec.Status)
		}
		statuses[rec.Status]++
		if evs := readEvents(t, p.base+"/v1/runs/"+r.id+"/events", "", 0); !strings.HasSuffix(evs[len(evs)-1], "result") {
			t.Fatalf("run %s: events %v", r.id, evs)
		}
		mu.Lock()
		n := hits[r.token]
		mu.Unlock()
		switch {
		case n > 1:
			t.Errorf("run %s (%s) fetched %d times: done twice", r.id, r.token, n)
		case n == 0 && rec.Status == "succeeded":
			t.Errorf("run %s (%s) succeeded without its fetch", r.id, r.token)
		}
	}
	t.Logf("the accepted runs ended: %v", statuses)
}

// postJSON posts body as JSON to url: for a goroutine other than the test's, which must not
// stop the test itself.
func postJSON(url, body string) (int, string, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}
