//go:build clustere2e

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/skillbox-dev/skillbox/internal/pgserver/pgtest"
)

// Load of one round: clients per run slot, the warm-up and the measured window.
const (
	loadClientsPerSlot = 2
	loadSlots          = 2
	loadWarm           = time.Second
	loadWindow         = 5 * time.Second
)

// BenchmarkClusterLoad measures how the cluster's throughput grows with its replicas (make
// bench-cluster): 1, 2 and 3 `skillbox serve --cluster nats://...` processes over one NATS
// server (one copy of each stream), and 3 over a NATS cluster of three keeping three copies,
// with one PostgreSQL, each with --max-runs 2, and two clients per run slot sending
// synchronous runs to the replicas in turn. An I/O-bound skill (io: a C guest that fetches a
// loopback server answering after 20 ms, twice) should grow with the replicas; io-go is the
// same wait in a standard Go guest, whose start (its 3.9 MB module instantiated, every run)
// costs more CPU than the wait; a CPU-bound one (word-count) is flat on a machine of 2 cores,
// which is the honest answer. Rounds are interleaved (1, 2, 3, 3 with three copies, 1, 2, ...)
// on this shared, noisy machine; each metric is the median of its rounds, and
// the ratios are to one replica in the same run.
func BenchmarkClusterLoad(b *testing.B) {
	ctx := context.Background()
	dsn, err := pgtest.Start(b).NewDatabaseURL(ctx)
	if err != nil {
		b.Fatal(err)
	}
	natsURL := startNATS(b)
	natsCluster := startNATSCluster(b, 3)
	slow := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><head><title>slow</title></head></html>")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go slow.Serve(ln)
	b.Cleanup(func() { slow.Close() })

	skills, policy := fetcherSkills(b)
	// The C conformance guest (33 KB): with only fetchUrl given it fetches it twice (GET, POST)
	// and skips the rest, so a run is I/O: 40 ms of waiting for a few hundred µs of its own.
	cfetch := filepath.Join(skills, "cfetch")
	if err := os.MkdirAll(cfetch, 0o755); err != nil {
		b.Fatal(err)
	}
	writeFile(b, filepath.Join(cfetch, "skill.json"), manifest("cfetch", `"parameters":{"type":"object"},"permissions":{"network":["127.0.0.1"]},"limits":{"timeoutMs":60000}`))
	writeFile(b, filepath.Join(cfetch, "execute.wasm"), string(mustRead(b, filepath.Join("..", "..", "examples", "wasm", "c", "conformance.wasm"))))
	wc := filepath.Join(skills, "word-count")
	if err := os.MkdirAll(wc, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, f := range []string{"skill.json", "execute.wasm"} {
		writeFile(b, filepath.Join(wc, f), string(mustRead(b, filepath.Join(bundled, "word-count", f))))
	}
	bin := binary(b)

	text := strings.Repeat("the quick brown fox jumps over the lazy dog ", 1500) // 66 KB
	for _, k := range []struct{ name, skill, body string }{
		{"io", "cfetch", `{"args":{"fetchUrl":"http://` + ln.Addr().String() + `/"}}`},
		{"io-go", "fetcher", `{"args":{"url":"http://` + ln.Addr().String() + `/"}}`},
		{"cpu", "word-count", `{"args":{"text":"` + text + `"}}`},
	} {
		if only := os.Getenv("SKILLBOX_LOAD_KINDS"); only != "" && !slices.Contains(strings.Split(only, ","), k.name) {
			continue // SKILLBOX_LOAD_KINDS=io,cpu measures those kinds only
		}
		// The setups of a round: 1, 2 and 3 replicas over one NATS server (one copy of each
		// stream), and 3 over a NATS cluster of three with three copies of each.
		setups := []loadSetup{{1, 1, natsURL}, {2, 1, natsURL}, {3, 1, natsURL}, {3, 3, natsCluster}}
		rounds := map[loadSetup][]loadRound{}
		for rep := range 3 {
			for _, st := range setups {
				name := fmt.Sprintf("load%s%d%d%d", k.name, st.replicas, st.copies, rep)
				rounds[st] = append(rounds[st], runLoadRound(b, bin, dsn, st.nats, skills, policy, st.replicas, st.copies, name, k.skill, k.body))
			}
		}
		rate := map[loadSetup]float64{}
		for _, st := range setups {
			var rates []float64
			var lat []time.Duration
			for _, r := range rounds[st] {
				rates = append(rates, r.rate)
				lat = append(lat, r.latencies...)
			}
			slices.Sort(rates)
			slices.Sort(lat)
			rate[st] = rates[len(rates)/2]
			p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
			label := fmt.Sprintf("%dreplicas", st.replicas)
			if st.copies > 1 {
				label += fmt.Sprintf("-%dcopies", st.copies)
			}
			b.ReportMetric(rate[st], fmt.Sprintf("%s-runs/s-%s", k.name, label))
			b.ReportMetric(float64(p50.Microseconds())/1000, fmt.Sprintf("%s-p50-ms-%s", k.name, label))
			b.ReportMetric(float64(p99.Microseconds())/1000, fmt.Sprintf("%s-p99-ms-%s", k.name, label))
			b.Logf("%s, %d replica(s), %d cop(ies): %.0f runs/s (rounds %.0f), p50 %v, p99 %v", k.name, st.replicas, st.copies, rate[st], rates, p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond))
		}
		one := rate[setups[0]]
		b.ReportMetric(rate[setups[1]]/one, k.name+"-x2/1")
		b.ReportMetric(rate[setups[2]]/one, k.name+"-x3/1")
		b.ReportMetric(rate[setups[3]]/one, k.name+"-x3/1-3copies")
		b.Logf("%s: 2 replicas %.2fx one, 3 replicas %.2fx one; with three copies of each stream %.2fx one", k.name,
			rate[setups[1]]/one, rate[setups[2]]/one, rate[setups[3]]/one)
	}
}

// fetcherSkills is a skills directory with fetcher (the bundled http-get module under a
// manifest that asks for the loopback host) and a policy that grants it.
func fetcherSkills(tb testing.TB) (skills, policy string) {
	skills = tb.TempDir()
	fetcher := filepath.Join(skills, "fetcher")
	if err := os.MkdirAll(fetcher, 0o755); err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, filepath.Join(fetcher, "skill.json"), manifest("fetcher", `"parameters":{"url":{"type":"string","required":true}},"permissions":{"network":["127.0.0.1"]}`))
	writeFile(tb, filepath.Join(fetcher, "execute.wasm"), string(mustRead(tb, filepath.Join(bundled, "http-get", "execute.wasm"))))
	policy = filepath.Join(tb.TempDir(), "policy.yaml")
	writeFile(tb, policy, "network: [\"127.0.0.1\"]\nallowNetworks: [\"127.0.0.1/32\"]\n")
	return skills, policy
}

// loadSetup is a cluster a round loads: its replicas, the copies of each stream, over which NATS.
type loadSetup struct {
	replicas, copies int
	nats             string
}

// loadRound is what one round measured: runs/s in the window, and each run's latency.
type loadRound struct {
	rate      float64
	latencies []time.Duration
}

// runLoadRound starts n replicas of a fresh cluster named name (copies of each stream), loads them with synchronous
// runs of skill for loadWindow after loadWarm, and stops them. Any run that fails fails b.
func runLoadRound(b *testing.B, bin, dsn, natsURL, skills, policy string, n, copies int, name, skill, body string) loadRound {
	procs := make([]*serveProc, n)
	for i := range procs {
		procs[i] = startServe(b, bin, false, "serve", "--addr", "127.0.0.1:0", "--skills", skills, "--policy", policy,
			"--database", dsn, "--data-dir", b.TempDir(), "--cluster", natsURL, "--cluster-name", name, "--cluster-replicas", fmt.Sprint(copies),
			"--node-id", fmt.Sprintf("n%d", i), "--max-runs", fmt.Sprint(loadSlots), "--memory-budget", "512MiB", "--compile-memory", "256MiB")
	}
	for _, p := range procs {
		waitServing(b, p)
	}
	defer func() {
		for _, p := range procs {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			if p.wait(hangTimeout) < 0 {
				p.cmd.Process.Kill()
			}
		}
	}()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	send := func(p *serveProc) error {
		resp, err := client.Post(p.base+"/v1/skills/"+skill+"/runs", "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"success":true`) {
			return fmt.Errorf("%s: %d %s", p.base, resp.StatusCode, data)
		}
		return nil
	}
	for _, p := range procs { // compiled on every replica before the clock starts
		if err := send(p); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	from, until := start.Add(loadWarm), start.Add(loadWarm+loadWindow)
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	perSlot := loadClientsPerSlot
	if v, err := strconv.Atoi(os.Getenv("SKILLBOX_LOAD_CLIENTS_PER_SLOT")); err == nil && v > 0 {
		perSlot = v // to see what the overflow to the queue costs: 1 keeps every run local
	}
	for c := range perSlot * loadSlots * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; time.Now().Before(until); i++ {
				began := time.Now()
				err := send(procs[i%n])
				ended := time.Now()
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if began.After(from) && ended.Before(until) {
					lat = append(lat, ended.Sub(began))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		b.Fatalf("%d runs failed, the first: %v", len(errs), errs[0])
	}
	return loadRound{rate: float64(len(lat)) / loadWindow.Seconds(), latencies: lat}
}

// startNATS runs one NATS server with JetStream in this process, on a loopback port, and
// returns its URL.
func startNATS(b *testing.B) string {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: b.TempDir(), NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(hangTimeout) {
		b.Fatal("the NATS server did not start")
	}
	b.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

// startNATSCluster runs a NATS cluster of n servers with JetStream in this process, on loopback
// ports, and returns their URLs, comma-separated: streams may keep up to n copies.
func startNATSCluster(b *testing.B, n int) string {
	var routes []*url.URL
	ports := make([]int, n)
	for i := range ports {
		_, port, _ := net.SplitHostPort(freePort(b))
		ports[i], _ = strconv.Atoi(port)
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: "127.0.0.1:" + port})
	}
	var urls []string
	for i := range n {
		ns, err := natsserver.NewServer(&natsserver.Options{ServerName: fmt.Sprintf("s%d", i), Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: b.TempDir(), NoSigs: true, Routes: routes,
			Cluster: natsserver.ClusterOpts{Name: "load", Host: "127.0.0.1", Port: ports[i]}})
		if err != nil {
			b.Fatal(err)
		}
		go ns.Start()
		b.Cleanup(ns.Shutdown)
		if !ns.ReadyForConnections(hangTimeout) {
			b.Fatal("a NATS server of the cluster did not start")
		}
		urls = append(urls, ns.ClientURL())
	}
	return strings.Join(urls, ",")
}
