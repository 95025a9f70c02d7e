package sqlite_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// oldSchema makes a database as an older skillbox left it: migrations applied and recorded, the
// later ones not. It returns its path, the open database (to fill; close it before opening the
// store) and a statement runner that fails the test.
func oldSchema(t *testing.T, migrations ...string) (string, *sql.DB, func(string, ...any)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db, err := sql.Open("sqlite3", "file:"+path+"?_pragma=foreign_keys(on)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`)
	for i, name := range migrations {
		b, err := os.ReadFile(filepath.Join("migrations", name))
		if err != nil {
			t.Fatal(err)
		}
		exec(string(b))
		exec(`INSERT INTO schema_migrations VALUES (?, ?, 0)`, i+1, name)
	}
	return path, db, exec
}

// A database made before tenants (schema 2) keeps every run, version and file through the
// migration that adds them, all of it the default tenant's.
func TestUpgradeFromSchema2KeepsEverything(t *testing.T) {
	path, db, exec := oldSchema(t, "0001_runs.sql", "0002_versions.sql")
	data := []byte("(module)")
	sum := sha256.Sum256(data)
	blob := hex.EncodeToString(sum[:])
	digest := "sha256:" + blob // any well-formed digest
	started := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	exec(`INSERT INTO runs (id, skill, status, started_at, finished_at) VALUES ('run_old', 'w', 'succeeded', ?, ?)`, started, started+1000)
	exec(`INSERT INTO versions (skill, digest, status, created_at) VALUES ('w', ?, 'active', ?)`, digest, started)
	exec(`INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?)`, blob, len(data), data)
	exec(`INSERT INTO version_files (skill, digest, path, blob) VALUES ('w', ?, 'execute.wasm', ?)`, digest, blob)
	db.Close()

	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("migrate a schema-2 database: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	if r, err := s.FindRun(ctx, "run_old"); err != nil || r.Skill != "w" || r.Tenant != "" {
		t.Fatalf("the old run: %+v, %v", r, err)
	}
	if v, err := s.Version(ctx, "w", digest); err != nil || v.Status != version.Active {
		t.Fatalf("the old version: %+v, %v", v, err)
	}
	if files, err := s.VersionFiles(ctx, "w", digest); err != nil || string(files["execute.wasm"]) != string(data) {
		t.Fatalf("the old version's files: %v, %v", files, err)
	}
	if vs, err := s.Tenant("acme").Versions(ctx, "w"); err != nil || len(vs) != 0 {
		t.Fatalf("a tenant sees the default tenant's versions: %v, %v", vs, err)
	}
	// The constraint survived the rebuild: one active version per skill (per tenant).
	v2 := version.Version{Skill: "w", Digest: "sha256:" + hex.EncodeToString(make([]byte, 32)), Status: version.Draft, CreatedAt: time.Now()}
	if _, _, err := s.AddVersion(ctx, v2, map[string][]byte{"skill.json": []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetVersionStatus(ctx, "w", v2.Digest, version.Transitions["publish"], "a", "", time.Now()); err != nil {
		t.Fatalf("publish over the migrated active version: %v", err)
	}
	if v, _ := s.Version(ctx, "w", digest); v.Status != version.Deprecated {
		t.Fatalf("the old active version after a publish: %s", v.Status)
	}
	// The version recorded before events were kept has its recording in the feed and its trail.
	feed := s.(version.Feed)
	if vs, _, err := feed.Changes(ctx, 0, 10); err != nil || len(vs) != 4 || vs[0].Digest != digest {
		t.Fatalf("the feed after the upgrade: %+v, %v", vs, err)
	}
	if evs, err := feed.Events(ctx, "w", digest, 10); err != nil || len(evs) != 2 || evs[0].Action != "record" || evs[0].Status != version.Active || evs[1].Action != "deprecate" {
		t.Fatalf("the old version's events: %+v, %v", evs, err)
	}
}

// A version of a user's own skill recorded before versions named their user (schema 5) names
// none after the upgrade: it is in the tenant admin's review queue, in no user's.
func TestUpgradeFromSchema5KeepsUsersVersionsTheAdmins(t *testing.T) {
	path, db, exec := oldSchema(t, "0001_runs.sql", "0002_versions.sql", "0003_tenants.sql", "0004_artifacts.sql", "0005_visibility.sql")
	scoped := "notes@" + access.UserScope("alice")
	exec(`INSERT INTO versions (tenant, skill, digest, status, created_at) VALUES ('acme', ?, ?, 'pending', 1)`, scoped, "sha256:"+hex.EncodeToString(make([]byte, 32)))
	db.Close()

	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("migrate a schema-5 database: %v", err)
	}
	defer s.Close()
	acme := s.Tenant("acme")
	if list, err := acme.FindVersions(t.Context(), version.Query{Status: version.Pending, Viewer: "alice", Limit: 10}); err != nil || len(list) != 0 {
		t.Errorf("alice's queue lists a version that names no user: %+v %v", list, err)
	}
	if list, err := acme.FindVersions(t.Context(), version.Query{Status: version.Pending, Limit: 10}); err != nil || len(list) != 1 || list[0].Skill != scoped || list[0].User != "" {
		t.Errorf("the admin's queue: %+v %v", list, err)
	}
}
