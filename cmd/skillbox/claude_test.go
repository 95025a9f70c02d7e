package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudeSkills is a skills directory of testdata/claude-skills: instruction skills written as
// published skills that Claude Code loads are written.
func claudeSkills(name string) func(t *testing.T) string {
	return func(t *testing.T) string {
		dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "claude-skills", name))
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
}

// TestLoadWhatClaudeCodeLoads: list, show and validate load the skills Claude Code loads, show
// what the load repaired and how each breaks the Agent Skills rules, agree on their ids (derived
// where a directory's name is none) and report, never drop, two directories that make one id.
func TestLoadWhatClaudeCodeLoads(t *testing.T) {
	runCases(t, []cliCase{
		{
			name:  "list: loaded, with a note on stderr",
			given: claudeSkills("names"),
			when:  []string{"--skills", "$DIR", "list"},
			expect: expect{code: exitOK, stdout: []string{"my-skill ", "pdf-tools ", "guide ", "no-front ", "colon "},
				stderr: []string{"7 skills load with warnings against the Agent Skills format"}},
		},
		{
			name:  "list --json: the name and directory kept, the warnings",
			given: claudeSkills("names"),
			when:  []string{"--skills", "$DIR", "list", "--json"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				for _, s := range decode[[]obj](t, r.stdout) {
					if s["id"] != "my-skill" {
						continue
					}
					w, _ := s["warnings"].([]any)
					if s["name"] != "My_Skill" || !strings.HasSuffix(s["dir"].(string), "My_Skill") || s["status"] != "active" || len(w) != 2 {
						t.Errorf("my-skill: %v", s)
					}
					return
				}
				t.Errorf("no my-skill in %s", r.stdout)
			}},
		},
		{
			name:  "show: name, directory, warnings",
			given: claudeSkills("names"),
			when:  []string{"--skills", "$DIR", "show", "pdf-tools"},
			expect: expect{code: exitOK, stdout: []string{
				"pdf-tools  (instructions, active)\n", "  name:         pdf-tools\n", "pdf.tools\n",
				`  warning:      pdf.tools: the directory's name "pdf.tools" is not a valid skill id, so the skill's id is "pdf-tools"`,
			}},
		},
		{
			name:   "show: argument-hint and disable-model-invocation",
			given:  claudeSkills("manual"),
			when:   []string{"--skills", "$DIR", "show", "deploy"},
			expect: expect{code: exitOK, stdout: []string{"  arguments:    [environment] [version]\n", "  invocation:   by a user only"}},
		},
		{
			name:  "validate: valid with warnings, citing the rules; exit 1 only for the one that makes no id",
			given: claudeSkills("names"),
			when:  []string{"validate", "$DIR"},
			expect: expect{code: exitFailed, stdout: []string{
				"ok      my-skill (instructions, in My_Skill)\n",
				"ok      guide (instructions, in Guide)\n",
				"  warning: Guide/skill.md: is named skill.md; it breaks the Agent Skills rule: the file is named SKILL.md",
				"ok      no-front (instructions)\n",
				`  warning: long-desc/SKILL.md: name: "Long_Desc" breaks the Agent Skills rule: name must be 1-64 lowercase letters, digits and hyphens`,
				"  warning: long-desc/SKILL.md: description: is 1049 characters; it breaks the Agent Skills rule: description must be 1-1,024 characters",
				"  warning: long-desc/SKILL.md: compatibility: is 501 characters; it breaks the Agent Skills rule: compatibility must be at most 500 characters",
				"invalid ___\n",
				"7 skills, 1 invalid, 7 with warnings\n",
			}},
		},
		{
			name:  "validate: a clash of derived ids is reported as list reports it",
			given: claudeSkills("clash"),
			when:  []string{"validate", "--json", "$DIR"},
			expect: expect{code: exitFailed, check: func(t *testing.T, r result) {
				got := map[string]any{}
				for _, v := range decode[[]obj](t, r.stdout) {
					got[v["id"].(string)] = v["valid"]
				}
				want := map[string]any{"my-skill": true, "other-one": true, "My_Skill": false, "my.skill": false, "other.one": false}
				wantEqual(t, "validity", got, want)
			}},
		},
		{
			name: "validate: one skill directory whose SKILL.md is skill.md, as list finds it",
			given: func(t *testing.T) string {
				return filepath.Join(claudeSkills("names")(t), "Guide")
			},
			when:   []string{"validate", "$DIR"},
			expect: expect{code: exitOK, stdout: []string{"ok      guide (instructions, in Guide)\n", "1 skill, 0 invalid, 1 with warnings\n"}},
		},
	})
}

// A lower-case skill.md in the directory given to validate makes it a package, as it does for a
// scan; it used to be looked for among the subdirectories, and none found.
func TestValidateFindsLowercaseSkillMD(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "skill.md"), "---\nname: notes\ndescription: Takes notes.\n---\nTake notes.\n")
	r := cli(t, "", "validate", dir)
	if r.code != exitOK || !strings.Contains(r.stdout, "ok      notes (instructions)\n") || !strings.Contains(r.stdout, "is named skill.md") {
		t.Fatalf("%s", r)
	}
	l := cli(t, "", "--skills", filepath.Dir(dir), "list")
	if !strings.Contains(l.stdout, "notes ") {
		t.Fatalf("list: %s", l)
	}
}

// list --json carries a SKILL.md's allowed-tools as written, for the agent that honours them.
func TestListCarriesAllowedTools(t *testing.T) {
	runCases(t, []cliCase{{
		name: "list --json: allowed-tools",
		given: func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "pdf"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "pdf", "SKILL.md"), "---\nname: pdf\ndescription: Works with PDFs.\nallowed-tools: Read, Bash(python3:*)\n---\nRead it.\n")
			return dir
		},
		when: []string{"--skills", "$DIR", "list", "--json"},
		expect: expect{code: exitOK, check: func(t *testing.T, r result) {
			skills := decode[[]obj](t, r.stdout)
			if len(skills) != 1 || fmt.Sprint(skills[0]["allowed_tools"]) != "[Read Bash(python3:*)]" {
				t.Errorf("list --json: %s", r.stdout)
			}
		}},
	}})
}
