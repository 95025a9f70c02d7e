package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/runtime"
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
