package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestUsage(t *testing.T) {
	header := "skillbox <command> [flags] [args]"
	short := func(stderr ...string) expect {
		// A mistake is a few lines, never the whole help.
		return expect{code: exitUsage, emptyStdout: true, stderr: stderr, notStderr: []string{"Global flags", "Commands:"}}
	}
	runCases(t, []cliCase{
		{name: "no arguments", when: nil, expect: expect{code: exitUsage, emptyStdout: true, stderr: []string{header, "Commands:"}}},
		{name: "only global flags", when: []string{"--json"}, expect: expect{code: exitUsage, emptyStdout: true, stderr: []string{header}}},
		{name: "unknown command", when: []string{"frob"}, expect: short(`unknown command "frob"`, "Run 'skillbox --help' for usage.")},
		{name: "mistyped command", when: []string{"--skills", "$SKILLS", "lst", "--json"}, expect: short(`unknown command "lst"`, "Did you mean this?\n\tlist")},
		{name: "unknown global flag", when: []string{"--frob", "list"}, expect: short("skillbox: unknown flag: --frob\n")},
		{name: "mistyped flag", when: []string{"run", "hello", "--arg", "{}"}, expect: short("skillbox run: unknown flag: --arg (did you mean --args?)", "Run 'skillbox run --help' for usage.")},
		{name: "mistyped global flag", when: []string{"list", "--skill", "x"}, expect: short("unknown flag: --skill (did you mean --skills?)")},
		{name: "single-dash long flag", when: []string{"run", "-json", "hello"}, expect: short("long flags take two dashes: --json")},
		{name: "a usage error names the help", when: []string{"run"}, expect: short("run takes one skill id", "Run 'skillbox run --help' for usage.")},
		{name: "bad flag value", when: []string{"serve", "--max-runs", "many"}, expect: short(`invalid argument "many" for "--max-runs"`)},
		{name: "help", when: []string{"help"}, expect: expect{code: exitOK, stdout: []string{header, "Global flags", "validate", "instructions", "completion"}}},
		{name: "-h", when: []string{"-h"}, expect: expect{code: exitOK, stdout: []string{header, "--skills DIR"}}},
		{name: "--help", when: []string{"--help"}, expect: expect{code: exitOK, stdout: []string{header}}},
		{name: "--version", when: []string{"--version"}, expect: expect{code: exitOK, stdout: []string{"skillbox "}}},
		// A command's help: its flags, then the global ones in a section of their own.
		{name: "run -h", when: []string{"run", "-h"}, expect: expect{code: exitOK, stdout: []string{"skillbox run <id>", "Flags:\n      --args JSON", "Global flags:\n", "--skills DIR"}}},
		{name: "help run", when: []string{"help", "run"}, expect: expect{code: exitOK, stdout: []string{"skillbox run <id>", "--args JSON"}}},
		{name: "show --help", when: []string{"show", "--help"}, expect: expect{code: exitOK, stdout: []string{"skillbox show <id>"}}},
		{name: "help of a command without flags of its own", when: []string{"help", "list"}, expect: expect{code: exitOK, stdout: []string{"Flags:\n  -h, --help", "Global flags:"}}},
		{name: "bash completion", when: []string{"completion", "bash"}, expect: expect{code: exitOK, stdout: []string{"bash completion", "__skillbox"}}},
		{name: "zsh completion", when: []string{"completion", "zsh"}, expect: expect{code: exitOK, stdout: []string{"#compdef skillbox"}}},
		{name: "fish completion", when: []string{"completion", "fish"}, expect: expect{code: exitOK, stdout: []string{"complete -c skillbox"}}},
	})
}

// listFixtures is a skills directory with a working fixture, a broken skill and an
// instructions-only skill.
func listFixtures(t *testing.T) string {
	dir := t.TempDir()
	skillFixture(t, dir, "hello", manifest("hello", `"version":"0.1.0","tags":["a"]`), "hello")
	skillFixture(t, dir, "broken", manifest("broken", `"colour":"red"`), "hello")
	skillFixture(t, dir, "guide", "", "")
	writeFile(t, filepath.Join(dir, "guide", "SKILL.md"), "---\nname: guide\ndescription: How to do things well\n---\n# A guide\n")
	if err := os.MkdirAll(filepath.Join(dir, "not-a-skill"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestList(t *testing.T) {
	skills := bundledSkills(t)
	runCases(t, []cliCase{
		{
			name: "bundled skills",
			when: []string{"--skills", "$SKILLS", "list"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				ls := lines(r.stdout)
				if len(ls) != 1+len(skills) {
					t.Fatalf("want a header and %d rows, one per bundled skill:\n%s", len(skills), r.stdout)
				}
				if got := strings.Fields(ls[0]); strings.Join(got, " ") != "ID KIND STATUS VERSION DESCRIPTION" {
					t.Errorf("header = %q", ls[0])
				}
				for i, s := range skills {
					f := strings.Fields(ls[i+1])
					if len(f) < 4 || f[0] != s.id || f[1] != s.kind() || !listStatusOK(s, f[2]) || (s.version != "" && f[3] != s.version) {
						t.Errorf("row %d = %q, want %s %s %s %s ...", i+1, ls[i+1], s.id, s.kind(), listStatusWant(s), s.version)
					}
				}
				// columns are aligned: DESCRIPTION starts at the same offset on every line
				col := strings.Index(ls[0], "DESCRIPTION")
				for _, l := range ls[1:] {
					if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
						t.Errorf("row not aligned with DESCRIPTION at %d: %q", col, l)
					}
				}
				if !strings.Contains(r.stdout, "Counts the words, lines and characters of a text and lists its most fre…") {
					t.Errorf("long descriptions are not cut at 72 runes with an ellipsis:\n%s", r.stdout)
				}
			}},
		},
		{
			name: "bundled skills, json",
			when: []string{"list", "--json", "--skills", "$SKILLS"},
			// No instructions field (an instruction skill's kind is "instructions": a value, not a key).
			expect: expect{code: exitOK, notStdout: []string{`"parameters"`, `"instructions":`, `"permissions"`}, check: func(t *testing.T, r result) {
				list := decode[[]obj](t, r.stdout)
				if len(list) != len(skills) {
					t.Fatalf("want %d skills, one per bundled skill, got %d", len(skills), len(list))
				}
				byID := map[string]obj{}
				for i, b := range skills {
					s := list[i]
					id := b.id
					byID[id] = s
					wantEqual(t, "id", s["id"], id)
					wantEqual(t, id+" kind", s["kind"], b.kind())
					if b.lang != "" {
						wantEqual(t, id+" language", s["language"], b.lang)
					} else if _, has := s["language"]; has {
						t.Errorf("%s: an instruction skill lists a language: %v", id, s["language"])
					}
					if st, _ := s["status"].(string); !listStatusOK(b, st) {
						t.Errorf("%s: status %v, want %s", id, st, listStatusWant(b))
					}
					if b.version != "" {
						wantEqual(t, id+" version", s["version"], b.version)
					}
					wantEqual(t, "dir", s["dir"], filepath.Join(bundled, id))
					if d, _ := s["description"].(string); d == "" || strings.HasSuffix(d, "…") {
						t.Errorf("%s: description %q is empty or cut", id, d)
					}
					for _, k := range []string{"parameters", "requested", "granted", "sha256", "error"} {
						if _, has := s[k]; has {
							t.Errorf("%s: list --json has %q", id, k)
						}
					}
				}
				wantEqual(t, "word-count name", byID["word-count"]["name"], "Word count")
				wantEqual(t, "word-count tags", byID["word-count"]["tags"], []string{"text", "statistics"})
				wantEqual(t, "github-issues language", byID["github-issues"]["language"], "typescript")
			}},
		},
		{
			name:   "empty directory",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"--skills", "$DIR", "list"},
			expect: expect{code: exitOK, emptyStdout: true, stderr: []string{"no skills in ["}},
		},
		{
			name:   "empty directory, json",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"--skills", "$DIR", "list", "--json"},
			expect: expect{code: exitOK, stdout: []string{"[]\n"}},
		},
		{
			name:   "missing directory",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"--skills", "$DIR/nope", "list"},
			expect: expect{code: exitOK, emptyStdout: true, stderr: []string{"no skills in [", "nope]"}},
		},
		{
			name:   "extra argument",
			when:   []string{"--skills", "$SKILLS", "list", "hello"},
			expect: expect{code: exitUsage, emptyStdout: true, stderr: []string{"list takes no arguments"}},
		},
		{
			name:  "broken and instructions-only skills",
			given: listFixtures,
			when:  []string{"--skills", "$DIR", "list"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				ls := lines(r.stdout)
				if len(ls) != 4 {
					t.Fatalf("want a header and 3 rows:\n%s", r.stdout)
				}
				want := [][]string{
					{"broken", "executable", "error", "broken/skill.json: colour: unknown field"},
					{"guide", "instructions", "active"},
					{"hello", "executable", "unchecked", "0.1.0", "test skill hello"}, // no process ran it yet
				}
				for i, w := range want {
					for _, s := range w {
						if !strings.Contains(ls[i+1], s) {
							t.Errorf("row %d %q does not contain %q", i+1, ls[i+1], s)
						}
					}
				}
			}},
		},
		{
			name:  "broken and instructions-only skills, json",
			given: listFixtures,
			when:  []string{"--skills", "$DIR", "list", "--json"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				list := decode[[]obj](t, r.stdout)
				if len(list) != 3 {
					t.Fatalf("want 3 skills:\n%s", r.stdout)
				}
				wantEqual(t, "broken.status", list[0]["status"], "error")
				if e, _ := list[0]["error"].(string); !strings.Contains(e, "colour: unknown field") {
					t.Errorf("broken.error = %q, want the unknown field named", e)
				}
				wantEqual(t, "guide.kind", list[1]["kind"], "instructions")
				wantEqual(t, "guide.name", list[1]["name"], "guide")
				wantEqual(t, "hello.tags", list[2]["tags"], []string{"a"})
			}},
		},
		{
			name: "two directories, the first wins a clash",
			given: func(t *testing.T) string {
				dir := t.TempDir()
				skillFixture(t, dir, "hello", manifest("hello", `"version":"9.9.9"`), "hello")
				return dir
			},
			when: []string{"--skills", "$DIR", "--skills", "$SKILLS", "list", "--json"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				list := decode[[]obj](t, r.stdout)
				// every bundled skill once: the fixture's hello hides the bundled one
				byID := map[string]obj{}
				var ids []any
				for _, s := range list {
					id, _ := s["id"].(string)
					byID[id] = s
					ids = append(ids, id)
				}
				wantEqual(t, "ids", ids, bundledIDs(t))
				wantEqual(t, "hello.version", byID["hello"]["version"], "9.9.9")
				wantEqual(t, "word-count.version", byID["word-count"]["version"], "1.0.0")
			}},
		},
		{
			// cmd_list.go prints the (untrusted) description into the tabwriter as is: a "\n" in it
			// starts a new table row, so a skill can forge rows ("second  column" here looks like a
			// skill named "second"); a "\t" shifts the columns. Control characters should be
			// replaced (or quoted) before printing.
			name: "a description cannot forge table rows",
			given: func(t *testing.T) string {
				dir := t.TempDir()
				skillFixture(t, dir, "multi", `{"id":"multi","name":"m","description":"first line\nsecond\tcolumn"}`, "hello")
				return dir
			},
			when: []string{"--skills", "$DIR", "list"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				if n := len(lines(r.stdout)); n != 2 {
					t.Errorf("one skill printed on %d lines:\n%s", n, r.stdout)
				}
			}},
		},
		{
			name:   "bidi overrides and controls in a manifest are escaped",
			given:  hostileFixture,
			when:   []string{"--skills", "$DIR", "list"},
			expect: expect{code: exitOK, stdout: []string{`evil\u202egnp.exe \x9b2J a\u200bb \u2066x\u2069`, `1.0\u202e`}, check: wantTerminalSafe},
		},
		{
			name:   "bidi overrides and controls in a manifest stay exact with --json",
			given:  hostileFixture,
			when:   []string{"--skills", "$DIR", "list", "--json"},
			expect: expect{code: exitOK, stdout: []string{hostileDescription}},
		},
	})
}

// hostileDescription holds a bidi override, a C1 CSI, a zero-width space and bidi isolates.
const hostileDescription = "evil\u202egnp.exe \u009b2J a\u200bb \u2066x\u2069"

// hostileFixture is a skill whose manifest puts controls and bidi overrides everywhere a person
// reads them: description, name, version, tags, entrypoint and an argument's description.
func hostileFixture(t *testing.T) string {
	dir := t.TempDir()
	skillFixture(t, dir, "hostile", `{"id":"hostile","name":"n\u202eame","description":"`+hostileDescription+`",
		"version":"1.0\u202e","tags":["t\u202eag"],"entrypoint":"exe\u202ecute",
		"parameters":{"s":{"type":"string","description":"left\u202eright \u009b2J"}}}`, "hello")
	return dir
}

// wantTerminalSafe checks that nothing on stdout or stderr can start an escape sequence, move a
// terminal's cursor back or reorder text: no control but newline and tab (which only moves right;
// tables have their own test), no format character, no line separator, valid UTF-8.
func wantTerminalSafe(t *testing.T, r result) {
	t.Helper()
	for name, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		if !utf8.ValidString(s) {
			t.Errorf("%s is not valid UTF-8: %q", name, s)
		}
		for _, c := range s {
			if (unicode.IsControl(c) && c != '\n' && c != '\t') || unicode.Is(unicode.Cf, c) || c == '\u2028' || c == '\u2029' {
				t.Errorf("%s holds %U:\n%s", name, c, s)
			}
		}
	}
}

func TestShow(t *testing.T) {
	policy := func(content string) func(t *testing.T) string {
		return func(t *testing.T) string {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "policy.yaml"), content)
			return dir
		}
	}
	runCases(t, []cliCase{
		{
			name: "word-count",
			when: []string{"--skills", "$SKILLS", "show", "word-count"},
			expect: expect{code: exitOK, stdout: []string{
				"word-count  (executable, active)\n",
				"  name:         Word count\n",
				"  version:      1.0.0\n",
				"  tags:         text, statistics\n",
				"  instructions: " + filepath.Join(bundled, "word-count", "SKILL.md") + "\n",
				"entrypoint execute\n",
				"  arguments (JSON Schema):\n",
				`"required": [`,
				`"text": {`,
				`"maximum": 100`,
				"  permissions      requested -> granted\n",
				"    network        none -> none\n",
				"    files          none -> /skill (read-only)\n",
				"  limits           requested -> granted\n",
				"    timeoutMs      10000 -> 10000\n",
				"    memoryMiB      64 -> 64\n",
				"    maxOutputBytes default -> 1048576\n",
				"    maxWriteBytes  default -> 8388608\n",
			}, notStdout: []string{"not granted"}, check: func(t *testing.T, r result) {
				if !regexp.MustCompile(`module:       sha256 [0-9a-f]{64}, entrypoint execute`).MatchString(r.stdout) {
					t.Errorf("no module line with a sha256:\n%s", r.stdout)
				}
			}},
		},
		{
			name: "word-count, json",
			when: []string{"--skills", "$SKILLS", "show", "--json", "word-count"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				d := decode[obj](t, r.stdout)
				wantEqual(t, "id", d["id"], "word-count")
				wantEqual(t, "entrypoint", d["entrypoint"], "execute")
				wantEqual(t, "parameters.required", at(t, d, "parameters", "required"), []string{"text"})
				wantEqual(t, "parameters.additionalProperties", at(t, d, "parameters", "additionalProperties"), false)
				wantEqual(t, "requested", d["requested"], obj{})
				wantEqual(t, "requested_limits", d["requested_limits"], obj{"timeoutMs": 10000, "memoryMiB": 64})
				wantEqual(t, "granted.network", at(t, d, "granted", "network"), []any{})
				wantEqual(t, "granted.files", at(t, d, "granted", "files"), []obj{{"path": "/skill", "access": "read-only"}})
				wantEqual(t, "granted.limits.timeoutMs", at(t, d, "granted", "limits", "timeoutMs"), 10000)
				wantEqual(t, "granted.limits.maxOutputBytes", at(t, d, "granted", "limits", "maxOutputBytes"), 1<<20)
				if _, has := at(t, d, "granted").(obj)["refused"]; has {
					t.Errorf("word-count asks for nothing, yet something is refused: %v", d["granted"])
				}
			}},
		},
		{
			name: "http-get under the default policy",
			when: []string{"--skills", "$SKILLS", "show", "http-get"},
			expect: expect{code: exitOK, stdout: []string{
				"    network        example.com, *.wikipedia.org -> none\n",
				"  not granted:\n",
				"    - network example.com: the policy's network list does not allow it\n",
				"    - network *.wikipedia.org: the policy's network list does not allow it\n",
			}},
		},
		{
			name:  "http-get with a policy granting example.com",
			given: policy(`network: ["example.com"]` + "\n"),
			when:  []string{"--skills", "$SKILLS", "--policy", "$DIR/policy.yaml", "show", "http-get"},
			expect: expect{code: exitOK, stdout: []string{
				"    network        example.com, *.wikipedia.org -> example.com\n",
				"  not granted:\n    - network *.wikipedia.org: the policy's network list does not allow it\n",
			}, notStdout: []string{"- network example.com"}},
		},
		{
			name:  "http-get with a policy granting example.com, json",
			given: policy(`network: ["example.com"]` + "\n"),
			when:  []string{"show", "http-get", "--json", "--skills", "$SKILLS", "--policy", "$DIR/policy.yaml"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				d := decode[obj](t, r.stdout)
				wantEqual(t, "requested.network", at(t, d, "requested", "network"), []string{"example.com", "*.wikipedia.org"})
				wantEqual(t, "granted.network", at(t, d, "granted", "network"), []string{"example.com"})
				refused, _ := at(t, d, "granted", "refused").([]any)
				if len(refused) != 1 || !strings.Contains(refused[0].(string), "*.wikipedia.org") {
					t.Errorf("granted.refused = %v, want one entry for *.wikipedia.org", refused)
				}
			}},
		},
		{
			name:  "a policy capping limits",
			given: policy("limits: {timeoutMs: 2000}\n"),
			when:  []string{"--skills", "$SKILLS", "--policy", "$DIR/policy.yaml", "show", "word-count"},
			expect: expect{code: exitOK, stdout: []string{
				"    timeoutMs      10000 -> 2000\n",
				"    - limits.timeoutMs: 10000 asked, the policy caps it at 2000\n",
			}},
		},
		{
			name:   "a policy with an unknown field",
			given:  policy("network: [\"example.com\"]\nnetwrk: [\"*\"]\n"),
			when:   []string{"--skills", "$SKILLS", "--policy", "$DIR/policy.yaml", "show", "http-get"},
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{"policy.yaml", "netwrk: unknown field", `did you mean "network"?`}},
		},
		{
			name:  "a policy with an unknown field stops every command",
			given: policy("netwrk: []\n"),
			when:  []string{"--skills", "$SKILLS", "--policy", "$DIR/policy.yaml", "run", "word-count", "--args", wordCountArgs, "--json"},
			// With --json, stdout carries the error as JSON too, so a program always reads JSON.
			expect: expect{code: exitFailed, stdout: []string{`"error": "policy `, "netwrk"}, stderr: []string{"policy.yaml", "netwrk"}},
		},
		{
			name:   "a missing policy file",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"--skills", "$SKILLS", "--policy", "$DIR/nope.yaml", "list"},
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{"nope.yaml", "no such file"}},
		},
		{
			name:   "unknown skill",
			when:   []string{"--skills", "$SKILLS", "show", "nope"},
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{`no skill "nope"`, "skillbox list"}},
		},
		{
			name:   "missing id",
			when:   []string{"--skills", "$SKILLS", "show"},
			expect: expect{code: exitUsage, emptyStdout: true, stderr: []string{"show takes one skill id"}},
		},
		{
			name:   "two ids",
			when:   []string{"--skills", "$SKILLS", "show", "hello", "notes"},
			expect: expect{code: exitUsage, emptyStdout: true, stderr: []string{"show takes one skill id"}},
		},
		{
			name:   "broken skill",
			given:  listFixtures,
			when:   []string{"--skills", "$DIR", "show", "broken"},
			expect: expect{code: exitOK, stdout: []string{"broken  (executable, error)", "  problem:      ", "colour: unknown field"}},
		},
		{
			name:  "broken skill, json",
			given: listFixtures,
			when:  []string{"--skills", "$DIR", "show", "broken", "--json"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				d := decode[obj](t, r.stdout)
				wantEqual(t, "status", d["status"], "error")
				problems, _ := d["problems"].([]any)
				if len(problems) != 1 || !strings.Contains(problems[0].(string), "colour") {
					t.Errorf("problems = %v", problems)
				}
			}},
		},
		{
			name:  "bidi overrides and controls in a manifest are escaped",
			given: hostileFixture,
			when:  []string{"--skills", "$DIR", "show", "hostile"},
			expect: expect{code: exitOK, stdout: []string{
				"  name:         n\\u202eame\n",
				"  description:  evil\\u202egnp.exe \\x9b2J a\\u200bb \\u2066x\\u2069\n",
				"  version:      1.0\\u202e\n",
				"  tags:         t\\u202eag\n",
				", entrypoint exe\\u202ecute\n",
				// the schema stays JSON: its escapes are JSON's
				`"description": "left\u202eright \u009b2J"`,
			}, check: wantTerminalSafe},
		},
		{
			name:   "bidi overrides and controls in a manifest stay exact with show --json",
			given:  hostileFixture,
			when:   []string{"--skills", "$DIR", "show", "hostile", "--json"},
			expect: expect{code: exitOK, stdout: []string{"\"entrypoint\": \"exe\u202ecute\"", "\"description\": \"left\u202eright \u009b2J\""}},
		},
		{
			name:   "instructions-only skill",
			given:  listFixtures,
			when:   []string{"--skills", "$DIR", "show", "guide"},
			expect: expect{code: exitOK, stdout: []string{"guide  (instructions, active)", "instructions: "}, notStdout: []string{"permissions", "limits"}},
		},
	})
}

// validateFixtures is a directory of skills with problems of every sort.
func validateFixtures(t *testing.T) string {
	dir := t.TempDir()
	// three problems: an unknown field, a bad id and no module
	skillFixture(t, dir, "bad", `{"id":"Bad_ID","name":"b","description":"d","colour":"red"}`, "")
	// the module exports "run", not "execute"
	skillFixture(t, dir, "noexport", manifest("noexport", ""), "noexport")
	// the same module, named as the entrypoint
	skillFixture(t, dir, "entry", manifest("entry", `"entrypoint":"run"`), "noexport")
	return dir
}

func TestValidate(t *testing.T) {
	// Every bundled skill is valid: one line each, then the count.
	var allOK []string
	for _, s := range bundledSkills(t) {
		allOK = append(allOK, "ok      "+s.id+" ("+s.kind()+")")
	}
	allOK = append(allOK, fmt.Sprintf("%d skills, 0 invalid", len(allOK)))
	runCases(t, []cliCase{
		{
			name:   "bundled skills",
			warm:   bundledModules,
			when:   []string{"validate", bundled},
			expect: expect{code: exitOK, check: wantLines(allOK)},
		},
		{
			name:   "the --skills directories by default",
			warm:   bundledModules,
			when:   []string{"--skills", "$SKILLS", "validate"},
			expect: expect{code: exitOK, check: wantLines(allOK)},
		},
		{
			name:  "problems of every sort",
			given: validateFixtures,
			when:  []string{"validate", "$DIR"},
			expect: expect{code: exitFailed, check: func(t *testing.T, r result) {
				ls := lines(r.stdout)
				want := []*regexp.Regexp{
					regexp.MustCompile(`^invalid bad$`),
					regexp.MustCompile(`^  \S*bad/skill.json: colour: unknown field`),
					regexp.MustCompile(`^  \S*bad/skill.json: id: "Bad_ID" is not a valid skill id`),
					regexp.MustCompile(`^  \S*bad/execute.wasm: missing`),
					regexp.MustCompile(`^ok      entry \(executable\)$`),
					regexp.MustCompile(`^invalid noexport$`),
					regexp.MustCompile(`^  \S*noexport/execute.wasm: does not export the entrypoint "execute" \(it exports \[run\]\)`),
					regexp.MustCompile(`^3 skills, 2 invalid$`),
				}
				if len(ls) != len(want) {
					t.Fatalf("want %d lines, got:\n%s", len(want), r.stdout)
				}
				for i, re := range want {
					if !re.MatchString(ls[i]) {
						t.Errorf("line %d = %q, want %v", i+1, ls[i], re)
					}
				}
			}},
		},
		{
			// LoadSkill (runtime/skill.go:115-118) returns as soon as ParseManifest reports a
			// problem, so the module is never looked at: a package with manifest problems and no
			// execute.wasm is reported without "execute.wasm: missing", and the author needs a
			// second round, against SkillError's promise to report every problem in one pass.
			name:  "a missing module is reported with the manifest's problems",
			given: validateFixtures,
			when:  []string{"validate", "$DIR/bad"},
			expect: expect{code: exitFailed, stdout: []string{
				"invalid bad\n",
				"bad/skill.json: colour: unknown field",
				`bad/skill.json: id: "Bad_ID" is not a valid skill id`,
				"bad/execute.wasm: missing",
			}},
		},
		{
			name: "missing module alone",
			given: func(t *testing.T) string {
				dir := t.TempDir()
				skillFixture(t, dir, "nomod", manifest("nomod", ""), "")
				return dir
			},
			when:   []string{"validate", "$DIR"},
			expect: expect{code: exitFailed, stdout: []string{"invalid nomod\n", "nomod/execute.wasm: missing", "1 skill, 1 invalid\n"}},
		},
		{
			name:   "one skill directory",
			given:  validateFixtures,
			when:   []string{"validate", "$DIR/entry"},
			expect: expect{code: exitOK, stdout: []string{"ok      entry (executable)\n1 skill, 0 invalid\n"}, notStdout: []string{"noexport", "bad"}},
		},
		{
			name:   "one bundled skill directory",
			warm:   []string{"word-count"},
			when:   []string{"validate", bundled + "/word-count"},
			expect: expect{code: exitOK, stdout: []string{"ok      word-count (executable)\n1 skill, 0 invalid\n"}},
		},
		{
			name:   "one invalid skill directory",
			given:  validateFixtures,
			when:   []string{"validate", "$DIR/noexport"},
			expect: expect{code: exitFailed, stdout: []string{"invalid noexport\n", `does not export the entrypoint "execute"`, "1 skill, 1 invalid\n"}},
		},
		{
			name:   "several directories",
			given:  validateFixtures,
			when:   []string{"validate", "$DIR/entry", "$DIR/noexport"},
			expect: expect{code: exitFailed, stdout: []string{"ok      entry", "invalid noexport", "2 skills, 1 invalid\n"}},
		},
		{
			name:  "json",
			given: validateFixtures,
			when:  []string{"validate", "--json", "$DIR"},
			expect: expect{code: exitFailed, notStdout: []string{"skills, "}, check: func(t *testing.T, r result) {
				vs := decode[[]obj](t, r.stdout)
				if len(vs) != 3 {
					t.Fatalf("want 3 results:\n%s", r.stdout)
				}
				wantEqual(t, "ids", []any{vs[0]["id"], vs[1]["id"], vs[2]["id"]}, []string{"bad", "entry", "noexport"})
				wantEqual(t, "valid", []any{vs[0]["valid"], vs[1]["valid"], vs[2]["valid"]}, []bool{false, true, false})
				wantEqual(t, "entry.kind", vs[1]["kind"], "executable")
				if _, has := vs[1]["problems"]; has {
					t.Errorf("a valid skill has problems: %v", vs[1])
				}
				if p, _ := vs[0]["problems"].([]any); len(p) < 2 {
					t.Errorf("bad.problems = %v, want the unknown field and the bad id", p)
				}
				p, _ := vs[2]["problems"].([]any)
				if len(p) != 1 || !strings.Contains(p[0].(string), `entrypoint "execute"`) {
					t.Errorf("noexport.problems = %v", p)
				}
			}},
		},
		{
			name:   "json, bundled",
			warm:   bundledModules,
			when:   []string{"--json", "validate", bundled},
			expect: expect{code: exitOK, stdout: []string{`"id": "notes"`, `"valid": true`}, notStdout: []string{`"valid": false`}},
		},
		{
			name:   "an empty directory",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"validate", "$DIR"},
			expect: expect{code: exitFailed, stdout: []string{"0 skills, 0 invalid\n"}, stderr: []string{"no skill packages found in ["}},
		},
		{
			// cmd_validate.go:34 declares `var results []validation`, which stays nil when no
			// package is found, and writeJSON prints it as null.
			name:   "an empty directory, json",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"validate", "--json", "$DIR"},
			expect: expect{code: exitFailed, stdout: []string{"[]\n"}},
		},
		{
			name:   "a missing directory",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"validate", "$DIR/nope"},
			expect: expect{code: exitUsage, emptyStdout: true, stderr: []string{"nope is not a directory"}},
		},
		{
			name:   "a file, not a directory",
			when:   []string{"validate", bundled + "/hello/skill.json"},
			expect: expect{code: exitUsage, emptyStdout: true, stderr: []string{"skill.json is not a directory"}},
		},
	})
}

// wantLines checks that stdout is want, line by line.
func wantLines(want []string) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		if got := lines(r.stdout); !slices.Equal(got, want) {
			t.Errorf("stdout lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestVersion(t *testing.T) {
	runCases(t, []cliCase{
		{
			name:   "human",
			when:   []string{"version"},
			expect: expect{code: exitOK, stdout: []string{"skillbox ", "\n  abi     skillbox/v1\n", "  wazero  v", "  extism  v", "  go      go1."}},
		},
		{
			name: "json",
			when: []string{"version", "--json"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				v := decode[map[string]string](t, r.stdout)
				wantEqual(t, "abi", v["abi"], "skillbox/v1")
				for _, k := range []string{"skillbox", "go", "wazero", "extism"} {
					if v[k] == "" {
						t.Errorf("%s is empty: %v", k, v)
					}
				}
			}},
		},
		{
			name:   "json first",
			when:   []string{"--json", "version"},
			expect: expect{code: exitOK, stdout: []string{`"abi": "skillbox/v1"`}},
		},
		{
			// every other command refuses arguments it does not take (list: "list takes no
			// arguments", exit 2); version ignores them.
			name:   "extra argument",
			when:   []string{"version", "extra"},
			expect: expect{code: exitUsage},
		},
	})
}

// --claude-skills adds Claude Code's skill folders after --skills: here the project's
// .claude/skills, relative to the working directory, holds an instruction skill.
func TestClaudeSkillsDiscovery(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "skills", "reviewer"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".claude", "skills", "reviewer", "SKILL.md"), "---\nname: reviewer\ndescription: Reviews code\n---\nReview $ARGUMENTS carefully.\n")
	t.Chdir(dir)
	t.Setenv("HOME", t.TempDir())
	without := cli(t, "", "--skills", filepath.Join(dir, "none"), "list")
	with := cli(t, "", "--skills", filepath.Join(dir, "none"), "--claude-skills", "list")
	if strings.Contains(without.stdout, "reviewer") || !strings.Contains(with.stdout, "reviewer") || !strings.Contains(with.stdout, "instructions") {
		t.Fatalf("without:\n%s\nwith:\n%s", without, with)
	}
}

// list reads manifests only, so a skill no process has checked is unchecked; a run checks it, and
// the index it leaves in the cache lets the next list, in a new process, report what it found
// without reading the module again. A module found corrupt is listed broken the same way.
func TestListReportsWhatRunsChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skillFixture(t, dir, "hello", manifest("hello", ""), "hello")
	skillFixture(t, dir, "corrupt", manifest("corrupt", ""), "")
	writeFile(t, filepath.Join(dir, "corrupt", "execute.wasm"), "\x00asm\x01\x00\x00\x00\x01\xff") // a truncated section
	status := func() map[string]string {
		t.Helper()
		r := cli(t, "", "--skills", dir, "list", "--json")
		out := map[string]string{}
		for _, s := range decode[[]obj](t, r.stdout) {
			out[s["id"].(string)] = s["status"].(string)
		}
		return out
	}
	if got := status(); got["hello"] != "unchecked" || got["corrupt"] != "unchecked" {
		t.Fatalf("before any run: %v, want both unchecked", got)
	}
	if r := cli(t, "", "--skills", dir, "run", "hello"); r.code != exitOK {
		t.Fatalf("run hello: %s", r)
	}
	if r := cli(t, "", "--skills", dir, "run", "corrupt"); r.code == exitOK || !strings.Contains(r.stderr, "broken") {
		t.Fatalf("run corrupt: %s", r)
	}
	if got := status(); got["hello"] != "active" || got["corrupt"] != "error" {
		t.Errorf("after the runs: %v, want hello active, corrupt error", got)
	}
}
