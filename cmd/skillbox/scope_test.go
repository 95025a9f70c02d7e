package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// tenantsFixture writes dir/tenants.yaml: acme, with its own skills directory and a policy
// that grants api.acme.example, and globex, whose directory does not exist. It returns the
// file's path and acme's skills directory.
func tenantsFixture(t *testing.T, dir string) (file, acme string) {
	t.Helper()
	file = filepath.Join(dir, "tenants.yaml")
	writeFile(t, file, "- {name: acme, skills: ./acme, policy: ./acme-policy.yaml}\n- {name: globex, skills: ./globex}\n")
	writeFile(t, filepath.Join(dir, "acme-policy.yaml"), "network: [api.acme.example]\n")
	return file, filepath.Join(dir, "acme")
}

// versionsOf runs versions id with args and returns what --json lists.
func versionsOf(t *testing.T, id string, args ...string) []version.Version {
	t.Helper()
	r := cli(t, "", append([]string{"versions", id, "--json"}, args...)...)
	expect{code: exitOK}.verify(t, r)
	var out struct {
		Versions []version.Version `json:"versions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("versions --json: %v\n%s", err, r)
	}
	return out.Versions
}

// The version commands act on a tenant of a tenants file, its Runtime built as serve builds it:
// a published folder skill that then asks for a host the tenant's own policy grants is pending
// in that tenant (under the default policy, which grants no host, it would be a draft), listed
// and approved with --tenant; the default tenant, over the very same folder, knows nothing of
// the tenant's statuses; a tenant whose directory is missing gets a warning, not a directory.
func TestVersionCommandsInATenant(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file, acme := tenantsFixture(t, dir)
	in := func(args ...string) []string { return append(args, "--tenants", file, "--tenant", "acme") }
	pkg := skillFixture(t, acme, "tool", manifest("tool", `"version":"1.0.0"`), "hello")

	vs := versionsOf(t, "tool", in()...)
	if len(vs) != 1 || vs[0].Status != version.Draft || vs[0].Source != "folder" {
		t.Fatalf("acme's first version: %+v", vs)
	}
	expect{code: exitOK, stdout: []string{"it is now active"}}.verify(t, cli(t, "", in("publish", "tool", vs[0].Digest)...))
	writeFile(t, filepath.Join(pkg, "skill.json"), manifest("tool", `"version":"2.0.0","permissions":{"network":["api.acme.example"]}`))
	expect{code: exitOK, stdout: []string{"2.0.0", "pending", "asks for: network: + api.acme.example", "1.0.0", "active"}}.
		verify(t, cli(t, "", in("versions", "tool")...))
	vs = versionsOf(t, "tool", in()...)
	if len(vs) != 2 || vs[0].Status != version.Pending {
		t.Fatalf("acme's versions after the new host: %+v", vs)
	}
	pending := vs[0]
	// The review queue: acme's lists it, the default tenant's over the same folder does not.
	expect{code: exitOK, stdout: []string{"tool", "2.0.0", shortDigest(pending.Digest), "pending", "asks for: network: + api.acme.example"},
		stderr: []string{"approve one with: skillbox approve SKILL DIGEST --tenants " + file + " --tenant acme"}}.
		verify(t, cli(t, "", in("versions")...))
	expect{code: exitOK, stderr: []string{"no pending versions in the default tenant"}, emptyStdout: true}.
		verify(t, cli(t, "", "versions", "--skills", acme))
	expect{code: exitOK, stdout: []string{"tool", "1.0.0", "active"}}.verify(t, cli(t, "", in("versions", "--status", "active")...))

	// The default tenant over the same folder: its own versions, none pending, none active.
	for _, v := range versionsOf(t, "tool", "--skills", acme) {
		if v.Status == version.Pending || v.Status == version.Active {
			t.Errorf("the default tenant lists acme's status: %+v", v)
		}
	}

	short := shortDigest(pending.Digest)
	expect{code: exitOK, stdout: []string{"approved tool " + short + ": it is now draft",
		"skillbox publish tool " + short + " --tenants " + file + " --tenant acme"}}.
		verify(t, cli(t, "", in("approve", "tool", short[:8], "--note", "the host is ours")...))
	db := openDB(t, filepath.Join(testDataDir(t), sqlite.FileName))
	got, err := db.Tenant("acme").Version(t.Context(), "tool", pending.Digest)
	if err != nil || got.Status != version.Draft || got.UpdatedBy != osUser() || got.Note != "the host is ours" {
		t.Fatalf("acme's approved version in the store: %+v, %v", got, err)
	}
	if got, err := db.Version(t.Context(), "tool", pending.Digest); err == nil && got.Status != version.Draft {
		t.Fatalf("the default tenant's copy of the version moved: %+v", got)
	}
	expect{code: exitFailed, stderr: []string{"it is draft, and approve starts from [pending]", "skillbox versions tool --tenants " + file + " --tenant acme"}}.
		verify(t, cli(t, "", in("approve", "tool", short)...))

	// globex's directory is missing: a warning, and the command makes none.
	globex := []string{"versions", "tool", "--tenants", file, "--tenant", "globex"}
	expect{code: exitFailed, stderr: []string{"warning: skills directory " + filepath.Join(dir, "globex") + " of tenant globex", "does not exist",
		`no skill "tool"`, "in tenant globex"}, emptyStdout: true}.verify(t, cli(t, "", globex...))
	if _, err := os.Stat(filepath.Join(dir, "globex")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("versions --tenant globex made its skills directory: %v", err)
	}
}

// --user acts in a user's view, in the default tenant and in a tenant of a tenants file alike:
// a user's own skill (visibility user, in <skills>/.users/<scope>/) is listed, and its pending
// version approved, only with --user naming its user, and the version is filed under the user's
// scope in that tenant's part of the store.
func TestVersionCommandsAsUser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tenant string
	}{{"default tenant", ""}, {"tenant", "acme"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file, skills := tenantsFixture(t, dir)
			scope := []string{"--skills", skills}
			if tc.tenant != "" {
				scope = []string{"--tenants", file, "--tenant", tc.tenant}
			}
			in := func(args ...string) []string { return append(append(args, scope...), "--user", "alice@acme.example") }
			own := filepath.Join(skills, ".users", access.UserScope("alice@acme.example"))
			pkg := skillFixture(t, own, "notes", manifest("notes", `"version":"1.0.0","limits":{"timeoutMs":5000}`), "hello")

			vs := versionsOf(t, "notes", in()...)
			if len(vs) != 1 || vs[0].Status != version.Draft {
				t.Fatalf("alice's first version: %+v", vs)
			}
			expect{code: exitOK, stdout: []string{"it is now active"}}.verify(t, cli(t, "", in("publish", "notes", vs[0].Digest)...))
			writeFile(t, filepath.Join(pkg, "skill.json"), manifest("notes", `"version":"2.0.0"`))
			vs = versionsOf(t, "notes", in()...)
			if len(vs) != 2 || vs[0].Status != version.Pending {
				t.Fatalf("alice's versions after the wider limit: %+v", vs)
			}

			// The tenant's review queue names her: the operator approves it with --user.
			r := cli(t, "", append([]string{"versions", "--json"}, scope...)...)
			expect{code: exitOK}.verify(t, r)
			var queue struct {
				Versions []version.Version `json:"versions"`
				More     bool              `json:"more"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &queue); err != nil || len(queue.Versions) != 1 || queue.More ||
				queue.Versions[0].Skill != "notes" || queue.Versions[0].User != "alice@acme.example" || queue.Versions[0].Digest != vs[0].Digest {
				t.Fatalf("the review queue: %+v %v\n%s", queue, err, r)
			}

			// Nobody else sees it: not the tenant's view, not another user's.
			expect{code: exitFailed, stderr: []string{`no skill "notes"`}, emptyStdout: true}.
				verify(t, cli(t, "", append([]string{"versions", "notes"}, scope...)...))
			expect{code: exitFailed, stderr: []string{`user "bob" has no skills of their own`, `no skill "notes"`, `as user "bob"`}, emptyStdout: true}.
				verify(t, cli(t, "", append([]string{"approve", "notes", shortDigest(vs[0].Digest), "--user", "bob"}, scope...)...))

			expect{code: exitOK, stdout: []string{"approved notes", "it is now draft", "--user alice@acme.example"}}.
				verify(t, cli(t, "", in("approve", "notes", shortDigest(vs[0].Digest))...))
			db := openDB(t, filepath.Join(testDataDir(t), sqlite.FileName)).Tenant(tc.tenant)
			got, err := db.Version(t.Context(), "notes@"+access.UserScope("alice@acme.example"), vs[0].Digest)
			if err != nil || got.Status != version.Draft || got.UpdatedBy != osUser() {
				t.Fatalf("alice's approved version in %q's store: %+v, %v", tc.tenant, got, err)
			}
		})
	}
}

// A command line that does not name one tenant, or names a user or tenant wrongly, is a usage
// error that says why and how, before anything is opened.
func TestScopeUsageErrors(t *testing.T) {
	t.Parallel()
	file, _ := tenantsFixture(t, t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"tenant without the file", []string{"versions", "tool", "--tenant", "acme"},
			[]string{"--tenant acme needs --tenants FILE", "says where the tenant's skills are", "--tenants tenants.yaml --tenant acme"}},
		{"file without a tenant", []string{"publish", "tool", "12345678", "--tenants", file},
			[]string{"--tenants " + file, "--tenant NAME (acme, globex)", "drop --tenants for the default tenant"}},
		{"unknown tenant", []string{"approve", "tool", "12345678", "--tenants", file, "--tenant", "initech"},
			[]string{file + ` has no tenant "initech"`, "its tenants: acme, globex"}},
		{"tenants file missing", []string{"versions", "tool", "--tenants", file + ".gone", "--tenant", "acme"},
			[]string{"--tenants:", "tenants.yaml.gone"}},
		{"not a tenant name", []string{"yank", "tool", "12345678", "--tenants", file, "--tenant", "Acme Corp"},
			[]string{`"Acme Corp" is not a tenant's name`}},
		{"empty user", []string{"versions", "tool", "--user="},
			[]string{"give the user's name"}},
		{"versions: two ids", []string{"versions", "tool", "other"},
			[]string{"versions takes at most one skill id", "without one, it lists what waits for approval"}},
		{"versions: a limit with an id", []string{"versions", "tool", "--limit", "5"},
			[]string{"--limit bounds the review queue"}},
		{"versions: a limit out of bounds", []string{"versions", "--limit", "1001"},
			[]string{"--limit 1001: give 1 to 1000 versions"}},
		{"versions: not a status", []string{"versions", "--status", "waiting"},
			[]string{`"waiting" is not a version status`, "pending"}},
		{"runs: not a tenant name", []string{"runs", "--tenant", "../acme"},
			[]string{`"../acme" is not a tenant's name`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			expect{code: exitUsage, stderr: tc.want, emptyStdout: true}.verify(t, cli(t, "", tc.args...))
		})
	}
}

// runs --tenant lists the history of that tenant alone, its users' own runs too (the operator is
// its admin), finds a run id in that tenant alone, and says on stderr, for a tenant with no
// runs at all, which tenants have some.
func TestRunsInATenant(t *testing.T) {
	t.Parallel()
	db := openDB(t, filepath.Join(testDataDir(t), sqlite.FileName))
	start := time.Now().Add(-time.Hour)
	for i, r := range []struct{ tenant, id, visibleTo string }{
		{"", "run_default", ""}, {"acme", "run_acme_1", ""}, {"acme", "run_acme_2", "alice"}, {"globex", "run_globex", ""},
	} {
		at := start.Add(time.Duration(i) * time.Second)
		run := store.Run{ID: r.id, Skill: "hello", Face: "http", Caller: "alice", VisibleTo: r.visibleTo,
			Status: store.StatusSucceeded, StartedAt: at, FinishedAt: at}
		if err := db.Tenant(r.tenant).FinishRun(t.Context(), run); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(args ...string) []string {
		t.Helper()
		r := cli(t, "", append([]string{"runs", "--json"}, args...)...)
		expect{code: exitOK, notStderr: []string{"no runs"}}.verify(t, r)
		var p store.Page
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatalf("runs --json: %v\n%s", err, r)
		}
		var out []string
		for _, run := range p.Runs {
			out = append(out, run.ID)
		}
		return out
	}
	if got := strings.Join(ids("--tenant", "acme"), " "); got != "run_acme_2 run_acme_1" {
		t.Errorf("runs --tenant acme: %s", got)
	}
	if got := strings.Join(ids(), " "); got != "run_default" {
		t.Errorf("runs, the default tenant: %s", got)
	}
	if got := ids("--tenant", "acme", "--status", "failed"); len(got) != 0 {
		t.Errorf("runs --tenant acme --status failed: %s", got)
	}
	expect{code: exitOK, stdout: []string{"run_globex"}, notStdout: []string{"run_acme", "run_default"}}.
		verify(t, cli(t, "", "runs", "--tenant", "globex"))

	expect{code: exitOK, stdout: []string{"run       run_acme_2", "status    succeeded"}}.verify(t, cli(t, "", "runs", "--tenant", "acme", "run_acme_2"))
	expect{code: exitFailed, stderr: []string{`no run "run_acme_2" of tenant globex`, "skillbox runs --tenant globex"}, emptyStdout: true}.
		verify(t, cli(t, "", "runs", "--tenant", "globex", "run_acme_2"))
	expect{code: exitFailed, stderr: []string{`no run "run_acme_1"`, "--tenant NAME"}, emptyStdout: true}.verify(t, cli(t, "", "runs", "run_acme_1"))

	expect{code: exitOK, stdout: []string{"RUN"}, stderr: []string{"tenant acmee has no runs", "tenants with runs: acme, globex, the default tenant"}}.
		verify(t, cli(t, "", "runs", "--tenant", "acmee"))
	expect{code: exitOK, stdout: []string{`"runs": []`}, stderr: []string{"tenant acmee has no runs"}}.
		verify(t, cli(t, "", "runs", "--tenant", "acmee", "--json"))
	fresh := t.TempDir()
	expect{code: exitOK, stderr: []string{"tenant acme has no runs", "no tenant has any"}}.
		verify(t, cli(t, "", "runs", "--tenant", "acme", "--data-dir", fresh))
	expect{code: exitOK, notStderr: []string{"no runs"}}.verify(t, cli(t, "", "runs", "--data-dir", fresh))
	// A history of tenants' runs alone: runs without --tenant says where they are.
	if err := openDB(t, filepath.Join(fresh, sqlite.FileName)).Tenant("globex").FinishRun(t.Context(),
		store.Run{ID: "run_g", Skill: "hello", Status: store.StatusSucceeded, StartedAt: start, FinishedAt: start}); err != nil {
		t.Fatal(err)
	}
	expect{code: exitOK, stderr: []string{"the default tenant has no runs", "tenants with runs: globex (skillbox runs --tenant NAME)"}}.
		verify(t, cli(t, "", "runs", "--data-dir", fresh))
}

// The shell completes the scope flags: --tenant from the tenants file (versions) or from the
// tenants with runs (runs), --tenants with YAML files, and a skill id from the tenant's skills.
func TestCompleteScope(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file, acme := tenantsFixture(t, dir)
	skillFixture(t, acme, "acme-tool", manifest("acme-tool", ""), "hello")
	db := openDB(t, filepath.Join(testDataDir(t), sqlite.FileName))
	run := store.Run{ID: "run_1", Skill: "hello", Status: store.StatusSucceeded, StartedAt: time.Now(), FinishedAt: time.Now()}
	if err := db.Tenant("initech").FinishRun(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	expect{code: exitOK, stdout: []string{"acme\n", "globex\n", ":4\n"}}.
		verify(t, cli(t, "", "__complete", "versions", "--tenants", file, "--tenant", ""))
	expect{code: exitOK, stdout: []string{"yaml\n", "yml\n", ":8\n"}}.verify(t, cli(t, "", "__complete", "approve", "--tenants", ""))
	expect{code: exitOK, stdout: []string{"acme-tool\n", ":4\n"}, notStdout: []string{"word-count"}}.
		verify(t, cli(t, "", "__complete", "--skills", bundled, "approve", "--tenants", file, "--tenant", "acme", ""))
	expect{code: exitOK, stdout: []string{"initech\n", ":4\n"}}.verify(t, cli(t, "", "__complete", "runs", "--tenant", ""))
	// No store there: none is made to complete from.
	none := filepath.Join(t.TempDir(), "none")
	expect{code: exitOK, stdout: []string{":4\n"}, notStdout: []string{"initech"}}.
		verify(t, cli(t, "", "__complete", "runs", "--data-dir", none, "--tenant", ""))
	if _, err := os.Stat(none); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("completing runs --tenant made the data directory: %v", err)
	}
}
