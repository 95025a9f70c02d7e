package server

import (
	"context"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Canceling a run: only its starter or an admin may; the run ends canceled, and its message
// names the key that asked; a finished run is 409 with its status, an unknown one 404.
func TestCancelRun(t *testing.T) {
	t.Parallel()
	keys := []APIKey{
		{Name: "alice", Key: "alice-key-0123456789", Role: access.RoleRunner},
		{Name: "bob", Key: "bob-key-0123456789ab", Role: access.RoleAuthor},
		{Name: "root", Key: "root-key-0123456789a", Role: access.RoleAdmin},
		{Name: "eve", Key: "eve-key-0123456789ab", Role: access.RoleViewer},
	}
	env := liveEnv(t, Options{Keys: keys}, runtime.Config{})
	as := func(name string) []string {
		for _, k := range keys {
			if k.Name == name {
				return []string{"X-API-Key", k.Key}
			}
		}
		t.Fatalf("no key %s", name)
		return nil
	}
	long := endlessTicks // only its cancel ends it: a timeout would say timeout, not canceled

	for _, tc := range []struct {
		name, canceler string
	}{
		{"by the key that started it", "alice"},
		{"by an admin", "root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", long, as("alice")...)
			// Neither another key (even a higher role) nor a viewer may.
			wantError(t, post(t, env.ts.URL+a.Links.Cancel, ``, as("bob")...), 403, "forbidden")
			wantError(t, post(t, env.ts.URL+a.Links.Cancel, ``, as("eve")...), 403, "forbidden")
			r := post(t, env.ts.URL+a.Links.Cancel, ``, as(tc.canceler)...)
			if r.status != 202 || r.object(t)["run_id"] != a.RunID {
				t.Fatalf("cancel: %s", r)
			}
			evs := watch(t, env.ts.URL+a.Links.Events, as("eve")...)
			res := lastResult(t, evs)
			want := `the run was canceled: key "` + tc.canceler + `" asked for it`
			if res.Error == nil || res.Error.Kind != run.KindCanceled || res.Error.Message != want {
				t.Fatalf("result error %+v, want canceled: %s", res.Error, want)
			}
			// Again: it has finished.
			r = post(t, env.ts.URL+a.Links.Cancel, ``, as(tc.canceler)...)
			if e := wantError(t, r, 409, "run_finished"); len(e.Error.Details) != 1 || e.Error.Details[0] != "status: failed" {
				t.Errorf("409 details %q", e.Error.Details)
			}
		})
	}

	// A finished run that succeeded says so; its events may be gone, its result is known.
	r := post(t, env.ts.URL+"/v1/skills/echo/runs", `{}`, as("alice")...)
	id := runResult(t, r).RunID
	if e := wantError(t, post(t, env.ts.URL+"/v1/runs/"+id+"/cancel", ``, as("alice")...), 409, "run_finished"); !strings.Contains(e.Error.Message, "succeeded") {
		t.Errorf("409 message %q", e.Error.Message)
	}
	r = post(t, env.ts.URL+"/v1/runs/run_000000000000000000000000/cancel", ``, as("root")...)
	if e := wantError(t, r, 404, "not_found"); !strings.Contains(e.Error.Message, "another process") {
		t.Errorf("404 message %q", e.Error.Message)
	}
}

// A synchronous run in flight can be canceled too: its own client gets the canceled result.
func TestCancelSynchronousRun(t *testing.T) {
	t.Parallel()
	env := liveEnv(t, Options{}, runtime.Config{})
	resp := stream(t, context.Background(), env.ts.URL+"/v1/skills/ticker/runs", endlessTicks)
	defer resp.Body.Close()
	var res *run.Result
	readSSE(t, resp.Body, func(e sseEvent) bool {
		if e.name == "status" && e.ev.Status == "running" {
			if r := post(t, env.ts.URL+"/v1/runs/"+e.ev.RunID+"/cancel", ``); r.status != 202 {
				t.Errorf("cancel: %s", r)
			}
		}
		res = e.ev.Result
		return true
	})
	// The ticks never end by themselves: canceled, not timeout or success, is the cancel's doing.
	if res == nil || res.Error == nil || res.Error.Kind != run.KindCanceled || !strings.Contains(res.Error.Message, `key "anonymous"`) {
		t.Fatalf("result %+v", res)
	}
}

// A key with a user cancels its own runs, asynchronous or not: a run's owner is its caller
// (the key's user), as the run records it; another user's key may not.
func TestCancelByAKeyWithAUser(t *testing.T) {
	t.Parallel()
	keys := []APIKey{
		{Name: "ann-laptop", Key: "ann-key-0123456789ab", Role: access.RoleRunner, User: "ann"},
		{Name: "bob-laptop", Key: "bob-key-0123456789ab", Role: access.RoleRunner, User: "bob"},
	}
	env := liveEnv(t, Options{Keys: keys}, runtime.Config{})
	ann, bob := []string{"X-API-Key", keys[0].Key}, []string{"X-API-Key", keys[1].Key}
	a := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", endlessTicks, ann...)
	wantError(t, post(t, env.ts.URL+a.Links.Cancel, ``, bob...), 403, "forbidden")
	if r := post(t, env.ts.URL+a.Links.Cancel, ``, ann...); r.status != 202 {
		t.Fatalf("ann cancels her own run: %s", r)
	}
	if res := lastResult(t, watch(t, env.ts.URL+a.Links.Events, ann...)); res.Error == nil || res.Error.Kind != run.KindCanceled {
		t.Errorf("result %+v, want canceled", res.Error)
	}
}
