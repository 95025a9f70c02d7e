package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/version"
)

// reviewPkg is skill id at version, asking for the /output mount when wide: an upgrade to a wide
// one waits for an admin's approval.
func reviewPkg(t testing.TB, id, version string, wide bool) pkg {
	perms := ""
	if wide {
		perms = `,"permissions":{"files":[{"path":"/output","access":"read-write"}]}`
	}
	return pkg{"skill.json": []byte(manifestJSON(id, `"version":"`+version+`","parameters":{"type":"object"}`+perms)),
		"execute.wasm": wasmFixture(t, "echo")}
}

// GET /v1/versions is the review queue: what waits for approval across the tenant's skills. A
// user sees the tenant's and their own; the tenant's admin every user's, each naming the user,
// and approves one acting as that user (Skillbox-User). Its parameters are checked.
func TestReviewQueue(t *testing.T) {
	ts, _ := newUsersEnv(t)
	queue := func(key string, query string) versionQueue {
		t.Helper()
		r := get(t, ts.URL+"/v1/versions"+query, "X-API-Key", key)
		if r.status != http.StatusOK {
			t.Fatalf("GET /v1/versions%s: %s", query, r)
		}
		var q versionQueue
		r.decode(t, &q)
		return q
	}
	names := func(q versionQueue) string {
		var out []string
		for _, v := range q.Versions {
			out = append(out, v.Skill+"/"+v.User+"/"+string(v.Status))
		}
		return strings.Join(out, ",")
	}
	if q := queue(carolKey, ""); len(q.Versions) != 0 || q.More || q.Status != version.Pending {
		t.Fatalf("the queue before anything waits: %+v", q)
	}
	// alice's own skill and the tenant's, each published by the admin, then a wider upgrade of
	// each: alice's of hers, bob's of the tenant's.
	send := func(method, url string, p pkg, key string, want int) version.Version {
		t.Helper()
		r := upload(t, method, ts.URL+url, p, nil, "X-API-Key", key)
		if r.status != want {
			t.Fatalf("%s %s: %s, want %d", method, url, r, want)
		}
		var out installedSkill
		r.decode(t, &out)
		return *out.Version
	}
	publish := func(v version.Version) {
		t.Helper()
		if r := post(t, ts.URL+"/v1/skills/"+v.Skill+"/versions/"+v.Digest+"/publish", `{}`,
			"X-API-Key", carolKey, "Skillbox-User", "alice@acme"); r.status != http.StatusOK {
			t.Fatalf("publish %s: %s", v.Skill, r)
		}
	}
	publish(send("POST", "/v1/skills?visibility=user", reviewPkg(t, "alice-notes", "1", false), aliceKey, http.StatusCreated))
	send("PUT", "/v1/skills/alice-notes", reviewPkg(t, "alice-notes", "2", true), aliceKey, http.StatusAccepted)
	publish(send("POST", "/v1/skills", reviewPkg(t, "shared-notes", "1", false), bobKey, http.StatusCreated))
	send("PUT", "/v1/skills/shared-notes", reviewPkg(t, "shared-notes", "2", true), bobKey, http.StatusAccepted)
	if got, want := names(queue(carolKey, "")), "shared-notes//pending,alice-notes/alice@acme/pending"; got != want {
		t.Errorf("the admin's queue %s, want %s", got, want)
	}
	if got, want := names(queue(aliceKey, "")), "shared-notes//pending,alice-notes/alice@acme/pending"; got != want {
		t.Errorf("alice's queue %s, want %s", got, want)
	}
	if got, want := names(queue(bobKey, "")), "shared-notes//pending"; got != want {
		t.Errorf("bob's queue %s, want %s", got, want)
	}
	if got, want := names(queue(bobKey, "?status=active")), "shared-notes//active"; got != want {
		t.Errorf("bob's active versions %s, want %s", got, want)
	}
	if got, want := names(queue(carolKey, "?status=active")), "shared-notes//active,alice-notes/alice@acme/active"; got != want {
		t.Errorf("the admin's active versions %s, want %s", got, want)
	}
	if q := queue(carolKey, "?limit=1"); len(q.Versions) != 1 || !q.More {
		t.Errorf("a queue of 2 at limit 1: %+v", q)
	}
	// The queue has no trails unless asked; asked, each version's, alice's own skill's too.
	for _, v := range queue(carolKey, "?events=false").Versions {
		if v.Events != nil {
			t.Errorf("%s: a trail nobody asked for: %+v", v.Skill, v.Events)
		}
	}
	trails := func(q versionQueue) string {
		var out []string
		for _, v := range q.Versions {
			for _, e := range v.Events {
				out = append(out, e.Skill+":"+e.Action+":"+string(e.Status)+":"+e.By+":"+e.Note)
			}
		}
		return strings.Join(out, ",")
	}
	if got, want := trails(queue(carolKey, "?events=true")), "shared-notes:record:pending:bob@acme:,alice-notes:record:pending:alice@acme:"; got != want {
		t.Errorf("the queue's trails %s, want %s", got, want)
	}
	// The admin approves alice's as alice: the queue names the user to act as.
	alices := queue(carolKey, "").Versions[1]
	if r := post(t, ts.URL+"/v1/skills/"+alices.Skill+"/versions/"+alices.Digest+"/approve", `{"note":"ok"}`,
		"X-API-Key", carolKey, "Skillbox-User", alices.User); r.status != http.StatusOK {
		t.Fatalf("approve alice's as alice: %s", r)
	}
	if got, want := trails(queue(aliceKey, "?status=draft&events=true")), "alice-notes:record:pending:alice@acme:,alice-notes:approve:draft:carol@acme:ok"; got != want {
		t.Errorf("alice's approved version's trail %s, want %s", got, want)
	}
	if got, want := names(queue(carolKey, "")), "shared-notes//pending"; got != want {
		t.Errorf("the queue after the approval %s, want %s", got, want)
	}
	// Neither alice nor bob may approve: the queue is for everyone to read, approval the admin's.
	shared := queue(bobKey, "").Versions[0]
	wantError(t, post(t, ts.URL+"/v1/skills/shared-notes/versions/"+shared.Digest+"/approve", `{}`, "X-API-Key", bobKey), http.StatusForbidden, "forbidden")
	for _, bad := range []string{"?status=waiting", "?limit=0", "?limit=1001", "?limit=x", "?skill=alice-notes", "?status=pending&status=draft", "?events=yes"} {
		wantError(t, get(t, ts.URL+"/v1/versions"+bad, "X-API-Key", carolKey), http.StatusBadRequest, "bad_request")
	}
}
