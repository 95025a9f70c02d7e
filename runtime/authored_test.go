package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

func agentFiles(id, perms string) map[string][]byte {
	extra := `"parameters":{"n":{"type":"integer","default":1}}`
	if perms != "" {
		extra += "," + perms
	}
	return map[string][]byte{
		"skill.json": []byte(simple(id, extra)),
		"execute.js": []byte(`export function execute(args, ctx) { return {n: args.n + 1, env: ctx.env("TOKEN")}; }`),
	}
}

func TestAgentSkills(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fixture(t, dir, "operators", simple("operators", ""), "hello")
	pol := &policy.Policy{Network: []string{"api.example.com", "127.0.0.1"}, Env: map[string]string{"TOKEN": "t0k"},
		Secrets: map[string]policy.Secret{"KEY": {Value: "k", Hosts: []string{"api.example.com"}}}}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: pol})
	agent := InstallOptions{Face: run.FaceMCP, Who: asAgent(access.Local("claude"))}

	if _, err := rt.Install(ctx, "mine", agentFiles("mine", ""), agent); !errors.Is(err, ErrAuthoringOff) || !strings.Contains(err.Error(), "agentSkills: {enabled: true}") {
		t.Fatalf("authoring off: %v", err)
	}

	on := *pol
	on.AgentSkills = policy.AgentSkills{Enabled: true, Network: []string{"127.0.0.1"}, Limits: spec.Limits{TimeoutMs: 2000}}
	must(t, rt.SetPolicy(ctx, &on))
	// Beyond the ceiling: refused with every line of the diff, and nothing installed.
	_, err := rt.Install(ctx, "greedy", agentFiles("greedy", `"permissions":{"network":["api.example.com","127.0.0.1"],"env":["TOKEN"],"secrets":[{"name":"KEY","hosts":["api.example.com"],"header":"Authorization"}]},"limits":{"timeoutMs":5000}`), agent)
	for _, want := range []string{"network api.example.com", "env TOKEN", "secret KEY", "limits.timeoutMs: 5000 asked", "a human must grant it"} {
		if !errors.Is(err, ErrBeyondCeiling) || !strings.Contains(err.Error(), want) {
			t.Errorf("beyond the ceiling: %v, want %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "network 127.0.0.1") {
		t.Errorf("what the ceiling allows is not refused: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "greedy")); !os.IsNotExist(err) {
		t.Fatal("a refused skill was installed")
	}
	// Within it: installed, marked, live at once.
	s, err := rt.Install(ctx, "mine", agentFiles("mine", `"permissions":{"network":["127.0.0.1"]}`), agent)
	if err != nil {
		t.Fatal(err)
	}
	if !s.AgentWritten() || len(s.Grant().Network) != 1 {
		t.Fatalf("agent written %v, grant %+v", s.AgentWritten(), s.Grant())
	}
	res, err := rt.Run(ctx, run.Request{Skill: "mine", Args: []byte(`{"n":41}`), Who: testAdmin})
	if err != nil || string(res.Result) != `{"n":42,"env":null}` {
		t.Fatalf("run: %v %s", err, res.Result)
	}
	// Raising the policy does not lift an agent's skill past its ceiling.
	raised := on
	raised.Env = map[string]string{"TOKEN": "t0k"}
	must(t, rt.SetPolicy(ctx, &raised))
	if s, _ := rt.Skill("mine"); !s.AgentWritten() || len(s.Grant().Env) != 0 {
		t.Fatalf("after a policy change: %+v", s.Grant())
	}
	// An agent updates and deletes only what agents wrote.
	if _, err := rt.Install(ctx, "operators", agentFiles("operators", ""), InstallOptions{Replace: true, Who: asAgent(testAdmin)}); !errors.Is(err, ErrNotAgentSkill) {
		t.Fatalf("update of an operator's skill: %v", err)
	}
	if err := rt.Remove(ctx, asAgent(testAdmin), "operators"); !errors.Is(err, ErrNotAgentSkill) {
		t.Fatalf("delete of an operator's skill: %v", err)
	}
	if _, err := rt.Install(ctx, "mine", agentFiles("mine", ""), InstallOptions{Replace: true, MustExist: true, Who: asAgent(testAdmin)}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := rt.Remove(ctx, asAgent(access.Principal{Key: "ci", Role: access.RoleRunner}), "mine"); !errors.Is(err, access.ErrForbidden) {
		t.Fatalf("delete for a runner: %v", err)
	}
	must(t, rt.Remove(ctx, asAgent(testAdmin), "mine"))
	if _, err := rt.Skill("mine"); err == nil {
		t.Fatal("deleted skill still there")
	}
	// No package may carry the marker itself.
	files := agentFiles("forged", "")
	files[registry.AuthorMarker] = []byte(`{"by":"agent"}`)
	if _, err := rt.Install(ctx, "forged", files, InstallOptions{Who: testAdmin}); !errors.Is(err, spec.ErrInvalidSkill) {
		t.Fatalf("a package with the marker: %v", err)
	}
}
