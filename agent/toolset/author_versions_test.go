package toolset

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// With versions kept, a skill an agent writes beyond the agents' ceiling is not refused: it is
// kept pending, says so to the model, does not run, and no agent can approve it; a human admin's
// approval lets it run with what it asked.
func TestAgentSkillBeyondCeilingIsPending(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := &policy.Policy{Network: []string{"api.example.com"}, AgentSkills: policy.AgentSkills{Enabled: true}}
	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{t.TempDir()}, Policy: p, Versions: st, Shared: testengine.Shared(t, runtime.SharedConfig{NoCache: true})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	agent := WithOrigin(ctx, Origin{Face: run.FaceMCP, Who: access.Principal{Key: "claude", Role: access.RoleAuthor}})
	args := `{"id":"net","manifest":{"id":"net","name":"Net","description":"d","permissions":{"network":["api.example.com"]}},"files":{"execute.js":"export const execute = () => 1"}}`
	res, err := Call(agent, rt, ToolCreateSkill, []byte(args))
	if err != nil {
		t.Fatal(err)
	}
	var w WrittenSkill
	if err := json.Unmarshal(res.Result, &w); err != nil || w.Status != version.Pending || len(w.Diff) == 0 || !strings.Contains(w.Diff[0], "api.example.com") {
		t.Fatalf("written: %s %v", res.Result, err)
	}
	if text, _ := Handle(agent, rt, ToolCreateSkill, []byte(strings.Replace(args, `"net"`, `"net2"`, 2))); !strings.Contains(text, "does not run until a human admin approves it") {
		t.Fatalf("what the model reads: %s", text)
	}
	if got, _ := Handle(agent, rt, "skill_net", []byte(`{}`)); !strings.Contains(got, "pending_approval") {
		t.Fatalf("a run of the pending skill: %s", got)
	}
	if _, err := rt.ChangeVersion(ctx, access.Principal{Key: "claude", Role: access.RoleAdmin, Agent: true}, "net", w.Digest, "approve", ""); err == nil {
		t.Fatal("an agent approved")
	}
	v, err := rt.ChangeVersion(ctx, access.Principal{Key: "ops", Role: access.RoleAdmin}, "net", w.Digest, "approve", "")
	if err != nil || v.Status != version.Draft {
		t.Fatalf("approve: %+v %v", v, err)
	}
	out, err := rt.Run(ctx, run.Request{Skill: "net", Who: access.Local("test")})
	if err != nil || string(out.Result) != "1" {
		t.Fatalf("after approval: %v %s", err, out.Result)
	}
}
