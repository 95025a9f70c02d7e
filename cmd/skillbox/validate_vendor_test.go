package main

import (
	"strings"
	"testing"
)

// vendorFixtures is a directory of valid skills that vendors refuse: oneOf at the top of the
// schema (OpenAI and Anthropic), a 2,000-character description (OpenAI), a 63-character id
// (a 69-character tool name: OpenAI and Anthropic, and so MCP and skills.json), and a clean one.
func vendorFixtures(t *testing.T) string {
	dir := t.TempDir()
	skillFixture(t, dir, "clean", manifest("clean", `"parameters":{"q":{"type":"string"}}`), "echo")
	skillFixture(t, dir, "one-of", manifest("one-of", `"parameters":{"type":"object","properties":{"a":{"type":"string"}},"oneOf":[{"required":["a"]},{"maxProperties":0}]}`), "echo")
	skillFixture(t, dir, "wordy", `{"id":"wordy","name":"w","description":"`+strings.Repeat("w", 2000)+`"}`, "echo")
	long := "l" + strings.Repeat("o", 62)
	skillFixture(t, dir, long, manifest(long, ""), "echo")
	return dir
}

// TestValidateVendorRules: validate warns of each vendor rule a skill's tool breaks, naming the
// vendor, the rule, the fix and the lists that leave it out; the skills stay valid.
func TestValidateVendorRules(t *testing.T) {
	runCases(t, []cliCase{
		{
			name:  "text",
			given: vendorFixtures,
			when:  []string{"validate", "$DIR"},
			expect: expect{code: exitOK, stdout: []string{
				"ok      clean (executable)\nok      l",
				"  warning: openai rule tool-name: the name \"skill_looo",
				"has 69 characters, more than 64 (a skill id of at most 58 characters fits) (left out of the tool lists for openai, mcp, well-known)\n",
				"  warning: anthropic rule tool-name: ",
				"ok      one-of (executable)\n  warning: openai rule parameters-root: the argument schema has [oneOf] at its top level",
				"(left out of the tool lists for openai)\n  warning: anthropic rule input-schema-root: ",
				"ok      wordy (executable)\n  warning: openai rule description-length: the description has 2000 characters, more than 1024",
				"4 skills, 0 invalid, 3 with warnings\n",
			}, notStdout: []string{"clean (executable)\n  warning"}},
		},
		{
			name:  "json",
			given: vendorFixtures,
			when:  []string{"validate", "--json", "$DIR"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				vs := decode[[]obj](t, r.stdout)
				if _, has := vs[0]["vendorRules"]; has || vs[0]["id"] != "clean" {
					t.Errorf("clean: %v", vs[0])
				}
				rules, _ := vs[3]["vendorRules"].([]any)
				if len(rules) != 1 {
					t.Fatalf("wordy: %v", vs[3])
				}
				b := rules[0].(map[string]any)
				wantEqual(t, "vendor", b["vendor"], "openai")
				wantEqual(t, "rule", b["rule"], "description-length")
				wantEqual(t, "tool", b["tool"], "skill_wordy")
				wantEqual(t, "leftOutOf", b["leftOutOf"], []string{"openai"})
			}},
		},
	})
}
