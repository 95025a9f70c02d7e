package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// askEnv serves a skill, "asker", that fetches a loopback server its manifest does not ask for,
// under a policy that lets a person allow that host.
func askEnv(t testing.TB, keys []APIKey, ask policy.Ask) (*testEnv, string) {
	t.Helper()
	return askEnvOn(t, keys, ask, nil)
}

// askEnvOn is askEnv with a run history in s.
func askEnvOn(t testing.TB, keys []APIKey, ask policy.Ask, s store.Store) (*testEnv, string) {
	t.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"asker/skill.json": manifestJSON("asker", `"parameters":{"url":{"type":"string","required":true}}`),
		"asker/execute.js": `export async function execute(args, ctx) {
  try { return {status: (await ctx.fetch(args.url)).status}; } catch (e) { return {error: e.name}; }
}`,
	})
	p := &policy.Policy{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Ask: ask}
	opts, cfg := Options{Keys: keys}, runtime.Config{Policy: p}
	if s != nil {
		opts.History, cfg.Recorder = s, storetest.NewRecorder(t, s, store.RecorderOptions{})
	}
	return newEnvRuntime(t, opts, cfg, dir), upstream.URL
}

// askKeys are the keys of the permission tests: ann and bob run, root is an admin, vic views;
// as gives the header of one, by name.
func askKeys(t *testing.T) (keys []APIKey, as func(name string) []string) {
	keys = []APIKey{
		{Name: "ann", Key: "ann-key-0123456789ab", Role: access.RoleRunner},
		{Name: "bob", Key: "bob-key-0123456789ab", Role: access.RoleRunner},
		{Name: "root", Key: "root-key-0123456789a", Role: access.RoleAdmin},
		{Name: "vic", Key: "vic-key-0123456789ab", Role: access.RoleViewer},
	}
	return keys, func(name string) []string {
		for _, k := range keys {
			if k.Name == name {
				return []string{"Authorization", "Bearer " + k.Key}
			}
		}
		t.Fatalf("no key %s", name)
		return nil
	}
}

// followRun reads a run's events to its result, calling onRequest at its permission request
// (in the reader's loop: the run waits for it), and returns the answer event and the result.
func followRun(t *testing.T, url string, onRequest func(run.PermissionRequest), header ...string) (*run.Asked, *run.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	resp := openEvents(t, ctx, url, header...)
	defer resp.Body.Close()
	var answered *run.Asked
	var res *run.Result
	asked := 0
	err := readSSE(t, resp.Body, func(e sseEvent) bool {
		switch {
		case e.ev.Permission != nil:
			asked++
			onRequest(*e.ev.Permission)
		case e.ev.Answered != nil:
			answered = e.ev.Answered
		}
		res = e.ev.Result
		return res == nil
	})
	if err != nil || res == nil || asked != 1 {
		t.Fatalf("the stream ended without its result (%v), or with %d permission requests, want 1", err, asked)
	}
	return answered, res
}

// Over HTTP a run's permission request is an event on its stream, listed to whom may see it,
// and answered by an admin; a viewer may not (403), nor another runner (403), nor the caller
// when the policy says only admins answer (403); a request of another run is 404, a bad answer
// is 400, and a second answer is 409.
func TestPermissionRequestAnsweredOverHTTP(t *testing.T) {
	t.Parallel()
	keys, as := askKeys(t)
	env, upstream := askEnv(t, keys, policy.Ask{Network: []string{"127.0.0.1"}})
	a := startAsync(t, env.ts.URL, "/v1/skills/asker/runs", `{"args":{"url":"`+upstream+`"}}`, as("ann")...)
	var q run.PermissionRequest
	answered, res := followRun(t, env.ts.URL+a.Links.Events, func(got run.PermissionRequest) {
		q = got
		if q.RunID != a.RunID || q.Kind != "network" || q.Target != "127.0.0.1" || q.Caller != "ann" || q.Skill != "asker" {
			t.Errorf("request %+v", q)
		}
		var list permissionRequests
		get(t, env.ts.URL+"/v1/permission-requests", as("root")...).decode(t, &list)
		if len(list.Requests) != 1 || list.Requests[0].ID != q.ID {
			t.Errorf("root's list %+v", list)
		}
		get(t, env.ts.URL+"/v1/permission-requests", as("bob")...).decode(t, &list)
		if len(list.Requests) != 0 {
			t.Errorf("bob sees %+v", list)
		}
		wantError(t, get(t, env.ts.URL+"/v1/permission-requests?run=x", as("root")...), 400, "bad_request")

		answer := env.ts.URL + "/v1/runs/" + a.RunID + "/permission-requests/" + q.ID
		wantError(t, post(t, answer, `{"decision":"once"}`, as("vic")...), 403, "forbidden")
		wantError(t, post(t, answer, `{"decision":"once"}`, as("bob")...), 403, "forbidden")
		wantError(t, post(t, answer, `{"decision":"once"}`, as("ann")...), 403, "forbidden")
		wantError(t, post(t, answer, `{"decision":"always"}`, as("root")...), 400, "bad_request")
		wantError(t, post(t, answer, `{"decision":"for","for_seconds":999999999}`, as("root")...), 400, "bad_request")
		wantError(t, post(t, answer, `{"decision":"once","why":"x"}`, as("root")...), 400, "bad_request")
		wantError(t, post(t, env.ts.URL+"/v1/runs/run_000000000000000000000000/permission-requests/"+q.ID, `{"decision":"once"}`, as("root")...), 404, "not_found")
		if r := post(t, answer, `{"decision":"once"}`, as("root")...); r.status != 200 {
			t.Fatalf("root's answer: %s", r)
		}
	}, as("root")...)
	answer := env.ts.URL + "/v1/runs/" + a.RunID + "/permission-requests/" + q.ID
	if answered == nil || answered.Outcome != run.OutcomeAllowedOnce || answered.By != "root" {
		t.Errorf("permission_answer event %+v", answered)
	}
	var out struct{ Status int }
	if err := json.Unmarshal(res.Result, &out); err != nil || out.Status != 204 || len(res.Usage.Asked) != 1 {
		t.Errorf("result %s, usage %+v: want the fetch allowed", res.Result, res.Usage.Asked)
	}
	wantError(t, post(t, answer, `{"decision":"deny"}`, as("root")...), 409, "conflict")
}

// An answer after the policy's timeout is refused: the run went on without it.
func TestPermissionAnswerAfterTheTimeout(t *testing.T) {
	t.Parallel()
	env, upstream := askEnv(t, nil, policy.Ask{Network: []string{"127.0.0.1"}, Timeout: time.Millisecond})
	a := startAsync(t, env.ts.URL, "/v1/skills/asker/runs", `{"args":{"url":"`+upstream+`"}}`)
	var q run.PermissionRequest
	_, res := followRun(t, env.ts.URL+a.Links.Events, func(got run.PermissionRequest) { q = got })
	if string(res.Result) != `{"error":"PermissionDenied"}` || res.Usage.Asked[0].Outcome != run.OutcomeNoAnswer {
		t.Errorf("result %s, asked %+v: want the fetch refused after no answer", res.Result, res.Usage.Asked)
	}
	r := post(t, env.ts.URL+"/v1/runs/"+a.RunID+"/permission-requests/"+q.ID, `{"decision":"once"}`)
	if e := wantError(t, r, 409, "conflict"); e.Error.Message == "" {
		t.Errorf("409 without a message")
	}
}

// An answer for a time is a permit: listed to an admin and to the caller it covers, not to
// another, honoured by the caller's next run without asking, and revoked by an admin alone.
func TestPermitsOverHTTP(t *testing.T) {
	t.Parallel()
	keys, as := askKeys(t)
	env, upstream := askEnv(t, keys, policy.Ask{Network: []string{"127.0.0.1"}})
	body := `{"args":{"url":"` + upstream + `"}}`
	a := startAsync(t, env.ts.URL, "/v1/skills/asker/runs", body, as("ann")...)
	followRun(t, env.ts.URL+a.Links.Events, func(q run.PermissionRequest) {
		if r := post(t, env.ts.URL+"/v1/runs/"+a.RunID+"/permission-requests/"+q.ID, `{"decision":"for","for_seconds":3600}`, as("root")...); r.status != 200 {
			t.Errorf("answer: %s", r)
		}
	}, as("root")...)

	var list permitList
	get(t, env.ts.URL+"/v1/permits", as("root")...).decode(t, &list)
	if len(list.Permits) != 1 || list.Permits[0].Caller != "ann" || list.Permits[0].By != "root" || list.Permits[0].RunID != a.RunID {
		t.Fatalf("root's permits %+v", list)
	}
	id := list.Permits[0].ID
	get(t, env.ts.URL+"/v1/permits", as("ann")...).decode(t, &list)
	if len(list.Permits) != 1 {
		t.Errorf("ann sees %+v, want her permit", list)
	}
	get(t, env.ts.URL+"/v1/permits", as("bob")...).decode(t, &list)
	if len(list.Permits) != 0 {
		t.Errorf("bob sees %+v", list)
	}
	res := runResult(t, post(t, env.ts.URL+"/v1/skills/asker/runs", body, as("ann")...))
	if string(res.Result) != `{"status":204}` || len(res.Usage.Asked) != 1 || res.Usage.Asked[0].Outcome != run.OutcomeGranted {
		t.Errorf("ann's next run: %s, %+v; want the permit honoured", res.Result, res.Usage.Asked)
	}
	wantError(t, send(t, "DELETE", env.ts.URL+"/v1/permits/"+id, nil, as("ann")...), 403, "forbidden")
	if r := send(t, "DELETE", env.ts.URL+"/v1/permits/"+id, nil, as("root")...); r.status != 204 {
		t.Fatalf("revoke: %s", r)
	}
	wantError(t, send(t, "DELETE", env.ts.URL+"/v1/permits/"+id, nil, as("root")...), 404, "not_found")
	get(t, env.ts.URL+"/v1/permits", as("root")...).decode(t, &list)
	if len(list.Permits) != 0 {
		t.Errorf("after the revocation: %+v", list)
	}
}

// On a node of a cluster, a request waiting on one node is listed on every node, and an answer
// sent to another node reaches the node whose run waits for it, where that node's runtime
// decides it: an admin's allows the run, another runner's is
// refused, and one after the run's end is over.
func TestPermissionAnsweredThroughAnotherNode(t *testing.T) {
	t.Parallel()
	keys, as := askKeys(t)
	hub, other := twoNodes(t)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(upstream.Close)
	node := func(n Cluster) *testEnv {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			"asker/skill.json": manifestJSON("asker", `"parameters":{"url":{"type":"string","required":true}}`),
			"asker/execute.js": `export async function execute(args, ctx) {
  try { return {status: (await ctx.fetch(args.url)).status}; } catch (e) { return {error: e.name}; }
}`,
		})
		p := &policy.Policy{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Ask: policy.Ask{Network: []string{"127.0.0.1"}}}
		return newEnvRuntime(t, Options{Keys: keys, Cluster: n}, runtime.Config{Policy: p}, dir)
	}
	a, b := node(hub), node(other)
	started := startAsync(t, a.ts.URL, "/v1/skills/asker/runs", `{"args":{"url":"`+upstream.URL+`"}}`, as("ann")...)
	var q run.PermissionRequest
	answered, res := followRun(t, a.ts.URL+started.Links.Events, func(got run.PermissionRequest) {
		q = got
		// Listed on the other node too, to whom may see it.
		var list permissionRequests
		get(t, b.ts.URL+"/v1/permission-requests", as("root")...).decode(t, &list)
		if len(list.Requests) != 1 || list.Requests[0].ID != q.ID {
			t.Errorf("root's list on the other node: %+v", list)
		}
		get(t, b.ts.URL+"/v1/permission-requests", as("bob")...).decode(t, &list)
		if len(list.Requests) != 0 {
			t.Errorf("bob's list on the other node: %+v", list)
		}
		there := b.ts.URL + "/v1/runs/" + started.RunID + "/permission-requests/" + q.ID
		wantError(t, post(t, there, `{"decision":"once"}`, as("bob")...), 403, "forbidden")
		wantError(t, post(t, there, `{"decision":"once"}`, as("ann")...), 403, "forbidden")
		wantError(t, post(t, there, `{"decision":"sometimes"}`, as("root")...), 400, "bad_request")
		if r := post(t, there, `{"decision":"once"}`, as("root")...); r.status != 200 {
			t.Errorf("root's answer through the other node: %s", r)
		}
	}, as("root")...)
	if answered == nil || answered.By != "root" || string(res.Result) != `{"status":204}` {
		t.Errorf("answered %+v, result %s", answered, res.Result)
	}
	there := b.ts.URL + "/v1/runs/" + started.RunID + "/permission-requests/" + q.ID
	wantError(t, post(t, there, `{"decision":"deny"}`, as("root")...), 409, "conflict")
}

// While a run waits for a person, the history's record of it says so: status waiting, a live
// status the record never keeps; once answered, it finishes as any run.
func TestWaitingRunReadsWaiting(t *testing.T) {
	t.Parallel()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	env, upstream := askEnvOn(t, nil, policy.Ask{Network: []string{"127.0.0.1"}}, s)
	a := startAsync(t, env.ts.URL, "/v1/skills/asker/runs", `{"args":{"url":"`+upstream+`"}}`)
	_, res := followRun(t, env.ts.URL+a.Links.Events, func(q run.PermissionRequest) {
		var r store.Run
		get(t, env.ts.URL+"/v1/runs/"+a.RunID).decode(t, &r)
		if r.Status != "waiting" {
			t.Errorf("a run waiting for its answer reads %q", r.Status)
		}
		if r := post(t, env.ts.URL+"/v1/runs/"+a.RunID+"/permission-requests/"+q.ID, `{"decision":"once"}`); r.status != 200 {
			t.Errorf("answer: %s", r)
		}
	})
	if !res.Success {
		t.Errorf("result %+v", res)
	}
}
