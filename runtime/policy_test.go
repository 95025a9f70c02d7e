package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
)

// The runtime holds a run's arguments to the policy's runs.maxArgsBytes (policy
// TestMaxArgsBytes), which Config.MaxArgsBytes (skillbox --max-args-bytes) replaces within the
// ceiling. Run refuses larger arguments before it resolves the skill.
func TestRunRefusesArgsPastMaxArgsBytes(t *testing.T) {
	p := &policy.Policy{Runs: policy.Runs{MaxArgsBytes: 1024}}
	dir := t.TempDir()
	fixture(t, dir, "echo", simple("echo", `"parameters":{"type":"object"}`), "echo")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: p})
	if rt.MaxArgsBytes() != 1024 {
		t.Errorf("MaxArgsBytes %d, want the policy's 1024", rt.MaxArgsBytes())
	}
	fits := `{"pad":"` + strings.Repeat("a", 1024-10) + `"}`
	if res, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(fits), Who: testAdmin}); err != nil || string(res.Result) != fits {
		t.Errorf("%d bytes of arguments: %v", len(fits), err)
	}
	over := `{"pad":"` + strings.Repeat("a", 1024-9) + `"}`
	if _, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(over), Who: testAdmin}); !errors.Is(err, run.ErrInvalidArgs) || !strings.Contains(err.Error(), "runs.maxArgsBytes") {
		t.Errorf("%d bytes of arguments: %v, want invalid_args naming runs.maxArgsBytes", len(over), err)
	}
	// The operator's flag replaces the policy's bound, within the ceiling.
	small := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: p, MaxArgsBytes: 16})
	if _, err := small.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(`{"pad":"abcdefgh"}`), Who: testAdmin}); !errors.Is(err, run.ErrInvalidArgs) {
		t.Errorf("18 bytes past Config.MaxArgsBytes 16: %v", err)
	}
	if _, err := New(context.Background(), Config{SkillDirs: []string{dir}, MaxArgsBytes: policy.MaxArgsBytesCeiling + 1}); err == nil {
		t.Error("Config.MaxArgsBytes past the ceiling was accepted")
	}
}
