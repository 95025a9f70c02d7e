package server

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeSkillsOverHTTP: GET /v1/skills lists the skills Claude Code loads under their ids
// (derived where a directory's name is none), with their names and warnings; the instructions
// name a skill without a frontmatter name after its directory, and render arguments as Claude
// Code does.
func TestClaudeSkillsOverHTTP(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "testdata", "claude-skills")
	env := newEnv(t, Options{}, filepath.Join(root, "names"), filepath.Join(root, "manual"))
	var list struct {
		Skills []struct {
			ID, Name, Status string
			Warnings         []string
		}
	}
	get(t, env.ts.URL+"/v1/skills").decode(t, &list)
	found := false
	for _, s := range list.Skills {
		if s.ID == "my-skill" {
			found = true
			if s.Name != "My_Skill" || s.Status != "active" || len(s.Warnings) != 2 || !strings.Contains(s.Warnings[1], `the skill's id is "my-skill"`) {
				t.Errorf("my-skill: %+v", s)
			}
		}
	}
	if !found {
		t.Fatalf("no my-skill: %+v", list)
	}
	var ins struct{ Name, Content string }
	get(t, env.ts.URL+"/v1/skills/my-skill/instructions", "Accept", "application/json").decode(t, &ins)
	if ins.Name != "My_Skill" {
		t.Errorf("instructions name %q", ins.Name)
	}
	r := get(t, env.ts.URL+"/v1/skills/deploy/instructions?arguments=staging+v2")
	if r.status != 200 || !strings.HasSuffix(string(r.body), "Deploy version v2 to staging (from /v1/skills/deploy/resources/).\n") {
		t.Errorf("deploy instructions: %s", r)
	}
}
