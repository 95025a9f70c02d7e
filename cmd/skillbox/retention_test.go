package main

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// serve --tenants prunes each tenant's history by its own retention from the tenants file, and
// every other (the default tenant, a tenant without one, a tenant no longer in the file) by
// --keep-runs, counted per tenant: the quiet tenant whose runs are oldest keeps what its own
// retention says, however many runs the others have.
func TestServeTenantRetention(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	s, err := sqlite.Open(t.Context(), filepath.Join(data, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	// acme's runs are the oldest; then globex's, a former tenant's, the default tenant's.
	start := time.Now().Add(-time.Hour)
	seq := 0
	for _, tenant := range []string{"acme", "globex", "gone", ""} {
		for range 5 {
			seq++
			at := start.Add(time.Duration(seq) * time.Second)
			r := store.Run{ID: fmt.Sprintf("run_%03d", seq), Skill: "hello", Face: "http", Status: store.StatusSucceeded, StartedAt: at, FinishedAt: at}
			if err := s.Tenant(tenant).FinishRun(t.Context(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	writeFile(t, filepath.Join(dir, "tenants.yaml"), "- {name: acme, skills: ./acme, retention: {maxRuns: 4}}\n- {name: globex, skills: ./globex}\n")
	writeFile(t, filepath.Join(dir, "keys.yaml"), "- {name: op, key: operator-key-0123456789, role: admin}\n"+
		"- {name: acme-admin, key: acme-key-0123456789, role: admin, tenant: acme}\n")
	p := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", bundled, "--keys", filepath.Join(dir, "keys.yaml"),
		"--tenants", filepath.Join(dir, "tenants.yaml"), "--data-dir", data, "--keep-runs", "2")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(hangTimeout); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, p.stderr())
	}
	s = openDB(t, filepath.Join(data, sqlite.FileName))
	for tenant, want := range map[string]int{"acme": 4, "globex": 2, "gone": 2, "": 2} {
		page, err := s.Tenant(tenant).ListRuns(t.Context(), store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Runs) != want {
			t.Errorf("tenant %q keeps %d runs, want %d", tenant, len(page.Runs), want)
		}
	}
}

// A bad retention in the tenants file is a usage error that names the tenant and the field.
func TestServeTenantRetentionRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.yaml"), "- {name: acme-admin, key: acme-key-0123456789, role: admin, tenant: acme}\n")
	for text, want := range map[string]string{
		"- {name: acme, skills: ./acme, retention: {maxAge: 10s}}": `tenant 1 (acme): retention: maxAge "10s": 10s is less than 1m0s`,
		"- {name: acme, skills: ./acme, retention: {maxRuns: -1}}": `tenant 1 (acme): retention: maxRuns "-1": give a number of runs`,
		"- {name: acme, skills: ./acme, retention: {keep: 5}}":     "field keep not found",
	} {
		writeFile(t, filepath.Join(dir, "tenants.yaml"), text)
		r := cli(t, "", "--skills", bundled, "serve", "--keys", filepath.Join(dir, "keys.yaml"), "--tenants", filepath.Join(dir, "tenants.yaml"))
		expect{code: exitUsage, stderr: []string{"--tenants", want}, emptyStdout: true}.verify(t, r)
	}
}
