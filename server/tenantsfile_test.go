package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
)

func TestLoadTenants(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "tenants.yaml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	specs, err := LoadTenants(write("- name: acme\n  skills: ./acme\n  shared: true\n  policy: acme.yaml\n  quota: {concurrentRuns: 4, runsPerMinute: 120}\n- name: globex\n  skills: /srv/globex\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := TenantSpec{Name: "acme", Skills: filepath.Join(dir, "acme"), Shared: true, Policy: filepath.Join(dir, "acme.yaml"),
		Quota: runtime.Quota{ConcurrentRuns: 4, RunsPerMinute: 120}}
	if len(specs) != 2 || specs[0] != want || specs[1].Skills != "/srv/globex" || specs[1].Shared {
		t.Fatalf("specs: %+v", specs)
	}
	for text, wants := range map[string][]string{
		"- name: Acme\n  skills: a\n":                      {"tenant 1 (Acme): name \"Acme\""},
		"- name: a\n  skills: x\n- name: a\n  skills: y\n": {"tenant 2 (a): name \"a\" is listed twice"},
		"- name: a\n": {"tenant 1 (a): skills:"},
		"- name: a\n  skills: x\n  qouta: {runsPerMinute: 1}\n":  {"field qouta not found"},
		"- name: a\n  skills: x\n  quota: {runsPerMinute: -1}\n": {"tenant 1 (a): quota:"},
		"":                      {"no tenants"},
		"- name: \n- name: b\n": {"tenant 1 ()", "tenant 2 (b): skills:"},
	} {
		_, err := LoadTenants(write(text))
		for _, w := range wants {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v, want it to say %q", text, err, w)
			}
		}
	}
}

// A tenant's retention reads as the server's --keep-runs and --keep-runs-for do; a field left
// out is the server's (zero); a bad value names the tenant and the field, and a misspelt field
// is refused, not taken for "the server's".
func TestLoadTenantsRetention(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tenants.yaml")
	load := func(text string) ([]TenantSpec, error) {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return LoadTenants(p)
	}
	specs, err := load(`
- {name: acme, skills: a, retention: {maxRuns: 10000, maxAge: 90d}}
- {name: globex, skills: g, retention: {maxRuns: unlimited}}
- {name: initech, skills: i, retention: {maxAge: 720h}}
- {name: hooli, skills: h}
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Retention{
		{MaxRuns: 10000, MaxAge: 90 * 24 * time.Hour},
		{MaxRuns: store.Unlimited},
		{MaxAge: 720 * time.Hour},
		{},
	}
	for i, w := range want {
		if specs[i].Retention != w {
			t.Errorf("%s's retention: %+v, want %+v", specs[i].Name, specs[i].Retention, w)
		}
	}
	for text, wants := range map[string][]string{
		"- {name: a, skills: x, retention: {maxRuns: -5}}":                          {`tenant 1 (a): retention: maxRuns "-5": give a number of runs`},
		"- {name: a, skills: x, retention: {maxAge: -1h}}":                          {`tenant 1 (a): retention: maxAge "-1h": give a duration`},
		"- {name: a, skills: x, retention: {maxAge: 10s}}":                          {`tenant 1 (a): retention: maxAge "10s": 10s is less than 1m0s`},
		"- {name: a, skills: x, retention: {maxAge: soon, maxRuns: x}}":             {`retention: maxAge "soon"`, `retention: maxRuns "x"`},
		"- {name: a, skills: x, retention: {maxRun: 5}}":                            {"field maxRun not found"},
		"- {name: a, skills: x, retention: 5}":                                      {"retention", "want a list of {name, skills, shared, policy, quota, retention}"},
		"- {name: a, skills: x}\n- {name: b, skills: y, retention: {maxRuns: 1.5}}": {`tenant 2 (b): retention: maxRuns "1.5"`},
	} {
		_, err := load(text)
		for _, w := range wants {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v, want it to say %q", text, err, w)
			}
		}
	}
}
