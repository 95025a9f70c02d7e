package server

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/pgserver/pgtest"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/postgres"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// srvDir is the socket directory a test server's DSN names: what a client must never be told.
func srvDir(dsn string) string {
	host, _, _ := strings.Cut(strings.TrimPrefix(dsn, "host="), " ")
	return host
}

// awaitReadyz polls /readyz until cond holds, for up to a minute.
func awaitReadyz(t *testing.T, base, what string, cond func(int, readyz) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		status, body := getReadyz(t, base)
		if cond(status, body) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: /readyz still answers %d %+v", what, status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A PostgreSQL store that stops (a fast shutdown, or killed as in a crash) under load costs the
// runs nothing: synchronous, asynchronous and streamed runs all succeed while it is down, their
// records wait in the spool, and once it is back every run is in the history, finished, as its
// client was answered: none lost, none left running or marked interrupted.
func TestStoreOutage(t *testing.T) {
	t.Parallel()
	for _, kill := range []bool{false, true} {
		name := "stopped"
		if kill {
			name = "killed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storeOutage(t, kill)
		})
	}
}

func storeOutage(t *testing.T, kill bool) {
	srv := pgtest.Start(t)
	dsn, err := srv.NewDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pg, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	rec := storetest.NewRecorder(t, pg, store.RecorderOptions{Spool: filepath.Join(t.TempDir(), "spool"), MaxSpoolBytes: 64 << 20})
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", ""), "hello", nil)
	env := newEnvRuntime(t, Options{History: pg}, runtime.Config{Recorder: rec, Versions: pg, Artifacts: rec}, dir)
	url := env.ts.URL + "/v1/skills/hello/runs"

	var mu sync.Mutex
	answered := map[string]bool{} // run id: succeeded, as its client was told
	var failures []string
	note := func(id string, ok bool, why string) {
		mu.Lock()
		defer mu.Unlock()
		if id != "" {
			answered[id] = ok
		}
		if !ok {
			failures = append(failures, why)
		}
	}
	// volley runs n synchronous runs from 4 clients, one asynchronous and one streamed.
	volley := func(n int) {
		var wg sync.WaitGroup
		for c := range 4 {
			wg.Go(func() {
				for range n / 4 {
					r := post(t, url, `{}`)
					var res struct {
						RunID   string `json:"run_id"`
						Success bool   `json:"success"`
					}
					if r.status == http.StatusOK {
						r.decode(t, &res)
					}
					note(res.RunID, r.status == http.StatusOK && res.Success, fmt.Sprintf("client %d: %s", c, r))
				}
			})
		}
		wg.Go(func() {
			r := post(t, url+"?async=true", `{}`)
			if r.status != http.StatusAccepted {
				note("", false, "async: "+r.String())
				return
			}
			var a acceptedReply
			r.decode(t, &a)
			evs := watch(t, env.ts.URL+a.Links.Events)
			last := evs[len(evs)-1]
			note(a.RunID, last.name == "result" && last.ev.Result != nil && last.ev.Result.Success, "async events: "+string(last.data))
		})
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				note("", false, "stream: "+err.Error())
				return
			}
			defer resp.Body.Close()
			var last sseEvent
			_ = readSSE(t, resp.Body, func(e sseEvent) bool { last = e; return true })
			ok := last.name == "result" && last.ev.Result != nil && last.ev.Result.Success
			id := ""
			if last.ev.Result != nil {
				id = last.ev.Result.RunID
			}
			note(id, ok, "stream: "+string(last.data))
		})
		wg.Wait()
	}

	volley(20) // the store up: the skill's version recorded, connections made
	srv.Halt(kill)
	// Down for longer than a cache of the store's answers could hide (a runtime once trusted
	// what it read of versions for a second): the runs must not need the store at all.
	time.Sleep(2 * time.Second)
	volley(200)
	// What needs the store says so, and when to try again: a transition, an install.
	var first struct {
		Digest string `json:"digest"`
	}
	post(t, url, `{}`).decode(t, &first)
	pub := post(t, env.ts.URL+"/v1/skills/hello/versions/"+first.Digest+"/publish", `{}`)
	if e := wantError(t, pub, http.StatusServiceUnavailable, "store_unavailable"); pub.header.Get("Retry-After") == "" || strings.Contains(e.Error.Message, srvDir(dsn)) {
		t.Errorf("publish with the store down: %s (Retry-After %q)", pub, pub.header.Get("Retry-After"))
	}
	body, ctype := multipartBody(t, map[string][]byte{"skill.json": []byte(manifestJSON("other", "")), "execute.wasm": wasmFixture(t, "hello")}, nil)
	if r := send(t, http.MethodPost, env.ts.URL+"/v1/skills", body, "Content-Type", ctype); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("install with the store down: %s", r)
	}
	if st := rec.Stats(); st.Up || st.Spooled == 0 {
		t.Errorf("while the store was down the recorder says %+v", st)
	}
	// Ready all along (the spool has room), and saying what is down.
	awaitReadyz(t, env.ts.URL, "the store down", func(status int, b readyz) bool {
		return status == http.StatusOK && !b.Records.Up && b.Records.Spooled > 0 && !b.Versions.Up
	})
	if err := srv.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	volley(20)
	// Every record in the store: the spool replayed, then a flush of what is queued that spooled
	// nothing (on a busy machine a commit can outlast WriteTimeout, and the flush spools it).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if st := rec.Stats(); st.Spooled == 0 && st.Up {
			if err := rec.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if st := rec.Stats(); st.Spooled == 0 && st.Up {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spool was not replayed: %+v", rec.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the records' outbox after the outage: %+v", rec.Stats())
	awaitReadyz(t, env.ts.URL, "the store back", func(status int, b readyz) bool {
		return status == http.StatusOK && b.Records.Up && b.Records.Spooled == 0 && b.Versions.Up
	})

	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("%d of %d runs failed; first: %s", len(failures), len(answered), failures[0])
	}
	if len(answered) != 246 {
		t.Fatalf("%d runs answered, want 246", len(answered))
	}
	for id, ok := range answered {
		r, err := pg.FindRun(t.Context(), id)
		switch {
		case err != nil:
			t.Errorf("run %s, answered, is not in the history: %v", id, err)
		case r.Status != store.StatusSucceeded || !ok:
			t.Errorf("run %s: the history says %s, its client was told success=%v", id, r.Status, ok)
		}
	}
	for _, status := range []store.Status{store.StatusRunning, store.StatusInterrupted} {
		page, err := pg.ListRuns(t.Context(), store.Query{Status: status})
		if err != nil || len(page.Runs) != 0 {
			t.Errorf("%d runs %s after the outage (%v)", len(page.Runs), status, err)
		}
	}
	if st := rec.Stats(); st.Dropped != 0 {
		t.Errorf("records dropped: %+v", st)
	}
}
