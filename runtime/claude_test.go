package runtime

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// claudeSkills is a skills directory of ../testdata/claude-skills: instruction skills written as
// published skills that Claude Code loads are written.
func claudeSkills(name string) string { return filepath.Join("..", "testdata", "claude-skills", name) }

// TestLoadWhatClaudeCodeLoads: directory names with capitals, underscores and dots, skill.md in
// lower case, no frontmatter, an unquoted ": ", no name: each loads, active, with an id derived
// from its directory's name where that is no id, its original name kept, and warnings that cite
// the rule broken. Only a name that makes no id at all is broken.
func TestLoadWhatClaudeCodeLoads(t *testing.T) {
	rt := newRuntime(t, Config{SkillDirs: []string{claudeSkills("names")}})
	settled(t, rt)
	tests := []struct {
		id, name, description string
		status                catalog.Status
		warnings              []string // substrings, one per warning, in order
	}{
		{"my-skill", "My_Skill", "A skill whose directory has capitals and an underscore, and whose frontmatter has no name.", catalog.StatusActive, []string{
			"My_Skill/SKILL.md: name: is missing, so the skill is named after its directory (Agent Skills rule: name is required)",
			`My_Skill: the directory's name "My_Skill" is not a valid skill id, so the skill's id is "my-skill" (` + skillmd.RuleName.String() + `) (rename the directory to "my-skill")`,
		}},
		{"pdf-tools", "pdf-tools", "Extracts text from PDF files.", catalog.StatusActive, []string{
			`pdf.tools/SKILL.md: name: "pdf-tools" is not the directory's name "pdf.tools"; it breaks the Agent Skills rule: name must match the skill's directory name`,
			`pdf.tools: the directory's name "pdf.tools" is not a valid skill id, so the skill's id is "pdf-tools"`,
		}},
		{"guide", "guide", "A guide whose file is named in lower case.", catalog.StatusActive, []string{
			"Guide/skill.md: is named skill.md; it breaks the Agent Skills rule: the file is named SKILL.md (rename it to SKILL.md)",
			`Guide/skill.md: name: "guide" is not the directory's name "Guide"`,
			`Guide: the directory's name "Guide" is not a valid skill id, so the skill's id is "guide"`,
		}},
		{"no-front", "no-front", "Writes a haiku about the user's topic.", catalog.StatusActive, []string{
			"no-front/SKILL.md: has no frontmatter, so the skill is named after its directory",
		}},
		{"colon", "colon", "Use this when: the user asks for a colon", catalog.StatusActive, []string{
			`colon/SKILL.md: description: holds an unquoted ": "`,
		}},
		{"long-desc", "Long_Desc", "", catalog.StatusActive, []string{
			`long-desc/SKILL.md: name: "Long_Desc" breaks the ` + skillmd.RuleName.String() + ` (write it as "long-desc")`,
			"long-desc/SKILL.md: description: is 1049 characters; it breaks the Agent Skills rule: description must be 1-1,024 characters",
			"long-desc/SKILL.md: compatibility: is 501 characters; it breaks the Agent Skills rule: compatibility must be at most 500 characters",
		}},
		{"___", "underscores", "A directory name that makes no id.", catalog.StatusError, []string{
			`___/SKILL.md: name: "underscores" is not the directory's name "___"`,
		}},
	}
	var ids []string
	for _, s := range rt.Skills() {
		ids = append(ids, s.ID())
	}
	if got := strings.Join(ids, " "); got != "___ colon guide long-desc my-skill no-front pdf-tools" {
		t.Fatalf("ids %s", got)
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			s, err := rt.Skill(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if s.Status() != tc.status || s.Kind() != spec.Instructions || s.Name() != tc.name || (tc.description != "" && s.Description() != tc.description) {
				t.Errorf("%s %s name %q description %q: %v", s.Kind(), s.Status(), s.Name(), s.Description(), s.Err())
			}
			got := s.Warnings()
			if len(got) != len(tc.warnings) {
				t.Fatalf("warnings:\n%s", strings.Join(got, "\n"))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d:\n got %s\nwant %s", i, got[i], w)
				}
			}
			if sum := s.Summary(); len(sum.Warnings) != len(got) || sum.Name != tc.name {
				t.Errorf("summary %+v", sum)
			}
		})
	}
	broken, _ := rt.Skill("___")
	if !strings.Contains(broken.Err().Error(), `"___" is not a valid skill id, and none can be made of it`) {
		t.Errorf("___: %v", broken.Err())
	}
}

// TestDerivedIDClash: two directories whose names make one id lose nothing silently. A directory
// named by the id keeps it; else the first by name does; each other one is listed, broken,
// under its directory's name, with a problem naming the skill that has the id. CheckSkills
// (skillbox validate) settles them the same way as the scan (skillbox list, serve).
func TestDerivedIDClash(t *testing.T) {
	dir := claudeSkills("clash")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	settled(t, rt)
	want := map[string]string{ // id -> the directory it is, and "" or the problem
		"my-skill":  "my-skill",
		"other-one": "Other_One",
		"My_Skill":  `My_Skill: the id "my-skill" made of the directory's name "My_Skill" is already the id of the skill in "my-skill"`,
		"my.skill":  `my.skill: the id "my-skill" made of the directory's name "my.skill" is already the id of the skill in "my-skill"`,
		"other.one": `other.one: the id "other-one" made of the directory's name "other.one" is already the id of the skill in "Other_One"`,
	}
	check := func(t *testing.T, skills []*Skill) {
		t.Helper()
		if len(skills) != len(want) {
			t.Fatalf("%d skills", len(skills))
		}
		for _, s := range skills {
			w, ok := want[s.ID()]
			switch {
			case !ok:
				t.Errorf("unexpected id %q (%s)", s.ID(), s.Dir())
			case strings.Contains(w, ":"):
				if s.Status() != catalog.StatusError || len(s.Problems()) != 1 || !strings.Contains(s.Problems()[0], w) {
					t.Errorf("%s: %s %v", s.ID(), s.Status(), s.Problems())
				}
			case s.Status() != catalog.StatusActive || filepath.Base(s.Dir()) != w:
				t.Errorf("%s: %s in %s: %v", s.ID(), s.Status(), s.Dir(), s.Err())
			}
		}
	}
	t.Run("scan", func(t *testing.T) { check(t, rt.Skills()) })
	t.Run("CheckSkills", func(t *testing.T) { check(t, rt.CheckSkills(context.Background(), dir)) })
}

// TestModelInvocation: disable-model-invocation and argument-hint reach the Skill.
func TestModelInvocation(t *testing.T) {
	rt := newRuntime(t, Config{SkillDirs: []string{claudeSkills("manual")}})
	deploy, err := rt.Skill("deploy")
	if err != nil {
		t.Fatal(err)
	}
	if deploy.ModelInvocable() || deploy.ArgumentHint() != "[environment] [version]" || deploy.Status() != catalog.StatusActive {
		t.Errorf("deploy: invocable %v, hint %q, %s", deploy.ModelInvocable(), deploy.ArgumentHint(), deploy.Status())
	}
	helper, _ := rt.Skill("helper")
	if !helper.ModelInvocable() || helper.ArgumentHint() != "<topic>" {
		t.Errorf("helper: invocable %v, hint %q", helper.ModelInvocable(), helper.ArgumentHint())
	}
}

// TestLookupBeforeScan: Skill(id) before any scan (skillbox show, run) finds a skill by the id
// derived from its directory's name, and settles a clash as the scan does.
func TestLookupBeforeScan(t *testing.T) {
	for _, tc := range []struct{ skills, id, dir string }{
		{"names", "pdf-tools", "pdf.tools"},
		{"names", "colon", "colon"},
		{"clash", "my-skill", "my-skill"},
		{"clash", "other-one", "Other_One"},
		{"clash", "My_Skill", "My_Skill"},
	} {
		rt := newRuntime(t, Config{SkillDirs: []string{claudeSkills(tc.skills)}})
		s, err := rt.Skill(tc.id)
		if err != nil || filepath.Base(s.Dir()) != tc.dir {
			t.Errorf("%s/%s: %v %v", tc.skills, tc.id, s, err)
		}
	}
	rt := newRuntime(t, Config{SkillDirs: []string{claudeSkills("names")}})
	if _, err := rt.Skill("pdf.tools"); err == nil {
		t.Errorf("a directory's name is not the id of a skill whose id was derived from it")
	}
}
