package server

import (
	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"

	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// benchEnv serves the WAT hello fixture (a trivial guest, so the HTTP layer's cost shows) with
// a client that keeps enough idle connections for parallel requests.
func benchEnv(b *testing.B) (*testEnv, *http.Client) {
	b.Helper()
	dir := b.TempDir()
	fixture(b, dir, "hello", manifestJSON("hello", ""), "hello", nil)
	env := newEnvRuntime(b, Options{}, runtime.Config{Shared: testengine.Shared(b, runtime.SharedConfig{Admission: runtime.Admission{MaxRuns: 256, MaxQueue: 1024}})}, dir)
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return env, &http.Client{Transport: tr}
}

// httpRun runs hello over HTTP. It reports failure with Error, not Fatal: it is called from
// RunParallel's goroutines too.
func httpRun(b *testing.B, client *http.Client, url string) bool {
	resp, err := client.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		b.Error(err)
		return false
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(data), `"success":true`) {
		b.Errorf("%d %s", resp.StatusCode, data)
		return false
	}
	return true
}

// BenchmarkHTTPRun is one POST /v1/skills/hello/runs over loopback HTTP against rt.Run of the same
// skill in the same process: ns/op is the HTTP run; "library-ns/op" is rt.Run; "x-library" is
// their ratio, what the HTTP frontend costs on top of the runtime.
func BenchmarkHTTPRun(b *testing.B) {
	env, client := benchEnv(b)
	url := env.ts.URL + "/v1/skills/hello/runs"
	ctx := context.Background()
	library := func() {
		res, err := env.rt.Run(ctx, run.Request{Skill: "hello", Args: []byte(`{}`), Who: access.Local("test")})
		if err != nil || !res.Success {
			b.Fatal(err)
		}
	}
	if !httpRun(b, client, url) { // compile, connect
		b.FailNow()
	}
	library()
	measure := func(f func()) float64 {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			f()
		}
		return float64(time.Since(start).Nanoseconds()) / float64(b.N)
	}
	b.ReportAllocs()
	b.ResetTimer()
	viaHTTP := measure(func() {
		if !httpRun(b, client, url) {
			b.FailNow()
		}
	})
	b.StopTimer()
	lib := measure(library)
	b.ReportMetric(lib, "library-ns/op")
	b.ReportMetric(viaHTTP/lib, "x-library")
}

// BenchmarkHTTPParallel is runs of the trivial skill from parallel loopback clients: req/s is the
// server's throughput.
func BenchmarkHTTPParallel(b *testing.B) {
	env, client := benchEnv(b)
	url := env.ts.URL + "/v1/skills/hello/runs"
	if !httpRun(b, client, url) {
		b.FailNow()
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !httpRun(b, client, url) {
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

// BenchmarkHTTPRoundTrip measures, interleaved in the same rounds (package interleave), a POST /v1/skills/hello/runs, the library call rt.Run of the same skill, and a
// bare net/http loopback POST to a handler that reads the body and writes a small JSON answer.
// Target: http <= library + 1.5 x bare, reported as "budget" = http / (library + 1.5 x bare),
// which must stay <= 1.
//
//	go test -run '^$' -bench HTTPRoundTrip -benchtime 3000x ./server/
func BenchmarkHTTPRoundTrip(b *testing.B) {
	env, client := benchEnv(b)
	url := env.ts.URL + "/v1/skills/hello/runs"
	ctx := context.Background()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"result":{"greeting":"hi"}}`)
	}))
	b.Cleanup(bare.Close)
	p50 := interleave.Run(b,
		interleave.Contender{Name: "library", F: func() {
			if res, err := env.rt.Run(ctx, run.Request{Skill: "hello", Args: []byte(`{}`), Who: access.Local("test")}); err != nil || !res.Success {
				b.Fatal(err)
			}
		}},
		interleave.Contender{Name: "http", F: func() {
			if !httpRun(b, client, url) {
				b.FailNow()
			}
		}},
		interleave.Contender{Name: "bare", F: func() {
			if !httpRun(b, client, bare.URL) {
				b.FailNow()
			}
		}})
	b.ReportMetric(p50["http"]/(p50["library"]+1.5*p50["bare"]), "budget")
}

// BenchmarkUserRun is a run of the tenant's skill over loopback HTTP by a user with a skill of
// their own (served from the user's view and Runtime) against the same run by a user without
// (the tenant's view), interleaved: "x-tenant" is the ratio of their medians, what a user's
// own view costs a request.
func BenchmarkUserRun(b *testing.B) {
	ts, _ := newUsersEnv(b)
	if r := upload(b, "POST", ts.URL+"/v1/skills?visibility=user", diaryPkg(b, "alice-diary", "1"), nil, "X-API-Key", aliceKey); r.status != http.StatusCreated {
		b.Fatalf("alice's upload: %s", r)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	run := func(key string) func() {
		return func() {
			req, _ := http.NewRequest("POST", ts.URL+"/v1/skills/team-tools/runs", strings.NewReader(`{"args":{}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-Key", key)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("run: %d", resp.StatusCode)
			}
		}
	}
	p50 := interleave.Run(b, interleave.Contender{Name: "user", F: run(aliceKey)}, interleave.Contender{Name: "tenant", F: run(bobKey)})
	b.ReportMetric(p50["user"]/p50["tenant"], "x-tenant")
}
