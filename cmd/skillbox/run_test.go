package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/policy"
)

const wordCountArgs = `{"text":"a b a"}`

// wantWordCount checks word-count's result value for wordCountArgs.
func wantWordCount(t *testing.T, v any) {
	t.Helper()
	wantEqual(t, "words", at(t, v, "words"), 3)
	wantEqual(t, "top[0]", at(t, v, "top", 0), obj{"word": "a", "count": 2})
	wantEqual(t, "top[1]", at(t, v, "top", 1), obj{"word": "b", "count": 1})
}

// wantRunJSON checks the --json envelope of a successful run of skill at version.
func wantRunJSON(skill, version string, value func(t *testing.T, v any)) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		res := decode[obj](t, r.stdout)
		if id, _ := res["run_id"].(string); !strings.HasPrefix(id, "run_") || len(id) != len("run_")+24 {
			t.Errorf("run_id = %q, want run_ and 24 hex digits", res["run_id"])
		}
		wantEqual(t, "skill", res["skill"], skill)
		wantEqual(t, "version", res["version"], version)
		wantEqual(t, "success", res["success"], true)
		if _, has := res["error"]; has {
			t.Errorf("a successful run has an error: %v", res["error"])
		}
		if logs, has := res["logs"]; !has {
			t.Errorf("no logs")
		} else if _, ok := logs.([]any); !ok {
			t.Errorf("logs = %#v, want an array", logs)
		}
		if d := num(t, at(t, res, "duration_ms")); d <= 0 {
			t.Errorf("duration_ms = %v, want > 0", d)
		}
		if p := num(t, at(t, res, "usage", "peak_memory_bytes")); p <= 0 {
			t.Errorf("usage.peak_memory_bytes = %v, want > 0", p)
		}
		value(t, at(t, res, "result"))
	}
}

// wantRunError checks the --json envelope of a failed run.
func wantRunError(kind string, msg ...string) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		res := decode[obj](t, r.stdout)
		wantEqual(t, "success", res["success"], false)
		wantEqual(t, "error.kind", at(t, res, "error", "kind"), kind)
		m, _ := at(t, res, "error", "message").(string)
		for _, s := range msg {
			if !strings.Contains(m, s) {
				t.Errorf("error.message %q does not contain %q", m, s)
			}
		}
		if _, has := res["result"]; has {
			t.Errorf("a failed run has a result: %v", res["result"])
		}
	}
}

func TestRunWordCount(t *testing.T) {
	human := expect{
		code:   exitOK,
		stderr: []string{"[debug] counted 3 words in 5 characters"},
		check: func(t *testing.T, r result) {
			wantWordCount(t, decode[obj](t, r.stdout))
			if !strings.HasPrefix(r.stdout, "{\n  \"words\": 3,") {
				t.Errorf("the result is not indented JSON:\n%s", r.stdout)
			}
		},
	}
	asJSON := expect{
		code:      exitOK,
		check:     wantRunJSON("word-count", "1.0.0", wantWordCount),
		notStderr: []string{"counted"}, // logs are in the JSON, not on stderr
	}
	argsFile := func(t *testing.T) string {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "args.json"), wordCountArgs)
		return dir
	}
	cases := []cliCase{
		{name: "human", when: []string{"--skills", "$SKILLS", "run", "word-count", "--args", wordCountArgs}, expect: human},
		{name: "json before the command", when: []string{"--json", "--skills", "$SKILLS", "run", "word-count", "--args", wordCountArgs}, expect: asJSON},
		{name: "json after the command", when: []string{"--skills", "$SKILLS", "run", "word-count", "--args", wordCountArgs, "--json"}, expect: asJSON},
		{name: "json between command and id", when: []string{"run", "--json", "word-count", "--skills", "$SKILLS", "--args", wordCountArgs}, expect: asJSON},
		{name: "args from a file", given: argsFile, when: []string{"--skills", "$SKILLS", "run", "word-count", "--args", "@$DIR/args.json"}, expect: human},
		{name: "args from a file, json", given: argsFile, when: []string{"--skills", "$SKILLS", "run", "word-count", "--json", "--args=@$DIR/args.json"}, expect: asJSON},
		{name: "args from stdin", stdin: wordCountArgs, when: []string{"--skills", "$SKILLS", "run", "word-count", "--args", "-"}, expect: human},
		{name: "args from stdin, json", stdin: wordCountArgs + "\n", when: []string{"--skills", "$SKILLS", "run", "word-count", "--args", "-", "--json"}, expect: asJSON},
	}
	for i := range cases {
		cases[i].warm = []string{"word-count"}
	}
	runCases(t, cases)
}

func TestRunArgsAndUsageErrors(t *testing.T) {
	usageErr := func(stderr ...string) expect {
		return expect{code: exitUsage, stderr: stderr, emptyStdout: true}
	}
	runCases(t, []cliCase{
		{
			name:   "args file missing",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"--skills", "$SKILLS", "run", "word-count", "--args", "@$DIR/nope.json"},
			expect: usageErr("--args: open", "nope.json"),
		},
		{
			name:   "args file is a directory",
			given:  func(t *testing.T) string { return t.TempDir() },
			when:   []string{"--skills", "$SKILLS", "run", "word-count", "--args", "@$DIR"},
			expect: usageErr("--args:", "is a directory"),
		},
		{
			name:   "args on stdin over the policy's 4 MiB",
			stdin:  `{"text":"` + strings.Repeat("a", policy.DefaultMaxArgsBytes) + `"}`,
			when:   []string{"--skills", "$SKILLS", "run", "word-count", "--args", "-"},
			expect: usageErr("--args: more than 4194304 bytes"),
		},
		{
			name:   "args on stdin over --max-args-bytes",
			stdin:  `{"text":"` + strings.Repeat("a", 100) + `"}`,
			when:   []string{"--skills", "$SKILLS", "--max-args-bytes", "64", "run", "word-count", "--args", "-"},
			expect: usageErr("--args: more than 64 bytes"),
		},
		{
			name:   "literal args over --max-args-bytes",
			when:   []string{"--skills", "$SKILLS", "--max-args-bytes", "64", "run", "word-count", "--args", `{"text":"` + strings.Repeat("a", 100) + `"}`},
			expect: expect{code: exitFailed, stderr: []string{"invalid_args", "runs.maxArgsBytes"}},
		},
		{name: "missing id", when: []string{"--skills", "$SKILLS", "run"}, expect: usageErr("run takes one skill id")},
		// With --json, a usage error is also JSON on stdout.
		{name: "missing id, only flags", when: []string{"--skills", "$SKILLS", "run", "--args", "{}", "--json"},
			expect: expect{code: exitUsage, stdout: []string{`"error": "run takes one skill id`}, stderr: []string{"run takes one skill id"}}},
		{name: "two ids", when: []string{"--skills", "$SKILLS", "run", "hello", "word-count"}, expect: usageErr("run takes one skill id")},
		{name: "two ids around a flag", when: []string{"--skills", "$SKILLS", "run", "hello", "--json", "word-count"},
			expect: expect{code: exitUsage, stdout: []string{`"error": "run takes one skill id`}, stderr: []string{"run takes one skill id"}}},
		{name: "args without a value", when: []string{"--skills", "$SKILLS", "run", "hello", "--args"}, expect: usageErr("skillbox run: flag needs an argument: --args", "Run 'skillbox run --help'")},
		{name: "unknown run flag", when: []string{"--skills", "$SKILLS", "run", "--argz", "{}", "hello"}, expect: usageErr("unknown flag: --argz (did you mean --args?)", "Run 'skillbox run --help'")},
		// A command's flags may come before its name, as a global's may come after it.
		{name: "run flag before the command", warm: []string{"hello"}, when: []string{"--args", `{"name":"Ada"}`, "--skills", "$SKILLS", "run", "hello"}, expect: expect{code: exitOK, stdout: []string{"Ada"}}},
	})
}

func TestRunInvalidArgs(t *testing.T) {
	wc := func(args ...string) []string {
		return append([]string{"--skills", "$SKILLS", "run", "word-count"}, args...)
	}
	runCases(t, []cliCase{
		{
			name:   "wrong type",
			when:   wc("--args", `{"text":5}`),
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{"run failed: invalid_args:", `argument "text"`, "want string"}},
		},
		{
			name:   "wrong type, json",
			when:   wc("--args", `{"text":5}`, "--json"),
			expect: expect{code: exitFailed, check: wantRunError("invalid_args", `argument "text"`), notStderr: []string{"invalid_args"}},
		},
		{
			name:   "unknown argument",
			when:   wc("--args", `{"text":"x","txet":"y"}`),
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{"invalid_args", "txet"}},
		},
		{
			name:   "unknown argument, json",
			when:   wc("--json", "--args", `{"text":"x","txet":"y"}`),
			expect: expect{code: exitFailed, check: wantRunError("invalid_args", "txet")},
		},
		{
			name:   "malformed JSON",
			when:   wc("--args", `{"text":`),
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{"invalid_args", "not valid JSON"}},
		},
		{
			name:   "malformed JSON, json",
			when:   wc("--args", `{text: "a"}`, "--json"),
			expect: expect{code: exitFailed, check: wantRunError("invalid_args", "not valid JSON")},
		},
		{
			name:   "not an object",
			when:   wc("--args", `["a b a"]`, "--json"),
			expect: expect{code: exitFailed, check: wantRunError("invalid_args", "must be a JSON object")},
		},
		{
			name:   "required argument missing (no --args)",
			when:   wc("--json"),
			expect: expect{code: exitFailed, check: wantRunError("invalid_args", "text")},
		},
		{
			name:   "empty --args is {}",
			when:   wc("--json", "--args", ""),
			expect: expect{code: exitFailed, check: wantRunError("invalid_args", "text")},
		},
		{
			name:   "out of range",
			when:   wc("--json", "--args", `{"text":"a","top":1000}`),
			expect: expect{code: exitFailed, check: wantRunError("invalid_args", `argument "top"`)},
		},
		{
			name:   "from stdin",
			stdin:  `{"text":true}`,
			when:   wc("--json", "--args", "-"),
			expect: expect{code: exitFailed, check: wantRunError("invalid_args", `argument "text"`)},
		},
	})
}

func TestRunFailures(t *testing.T) {
	fixtures := func(t *testing.T) string {
		dir := t.TempDir()
		skillFixture(t, dir, "loop", manifest("loop", `"limits":{"timeoutMs":100}`), "loop")
		skillFixture(t, dir, "noexport", manifest("noexport", ""), "noexport")
		skillFixture(t, dir, "broken", manifest("broken", `"colour":"red"`), "hello")
		skillFixture(t, dir, "guide", "", "")
		writeFile(t, filepath.Join(dir, "guide", "SKILL.md"), "---\nname: guide\ndescription: How to do things well\n---\n# A guide\n")
		return dir
	}
	httpGet := []string{"--skills", "$SKILLS", "run", "http-get", "--args", `{"url":"https://example.com"}`}
	runCases(t, []cliCase{
		{
			name:   "unknown skill",
			when:   []string{"--skills", "$SKILLS", "run", "nope"},
			expect: expect{code: exitFailed, emptyStdout: true, check: wantStderr(`skillbox: no skill "nope" in $SKILLS; skillbox list shows the skills there are` + "\n")},
		},
		{
			name:   "unknown skill, a typo of one",
			when:   []string{"--skills", "$SKILLS", "--skills", "$SKILLS/../nowhere", "run", "wrod-count"},
			expect: expect{code: exitFailed, emptyStdout: true, check: wantStderr(`skillbox: no skill "wrod-count" in $SKILLS, $SKILLS/../nowhere; did you mean word-count?`+"\n", "warning")},
		},
		{
			name: "unknown skill, json",
			when: []string{"--skills", "$SKILLS", "run", "nope", "--json"},
			expect: expect{code: exitFailed, check: func(t *testing.T, r result) {
				wantRunError("not_found")(t, r)
				res := decode[obj](t, r.stdout)
				wantEqual(t, "skill", res["skill"], "nope")
				wantEqual(t, "logs", res["logs"], []any{})
			}},
		},
		{
			name:   "network denied by the default policy",
			warm:   []string{"http-get"},
			when:   httpGet,
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{"[denied] fetch https://example.com", "run failed: permission_denied:", "denied"}},
		},
		{
			name: "network denied by the default policy, json",
			warm: []string{"http-get"},
			when: append([]string{"--json"}, httpGet...),
			expect: expect{code: exitFailed, notStderr: []string{"[denied]"}, check: func(t *testing.T, r result) {
				wantRunError("permission_denied", "denied", "example.com")(t, r)
				res := decode[obj](t, r.stdout)
				denied, _ := at(t, res, "usage", "denied").([]any)
				if len(denied) != 1 || !strings.Contains(denied[0].(string), "example.com") {
					t.Errorf("usage.denied = %v, want one entry naming example.com", denied)
				}
			}},
		},
		{
			name:   "timeout",
			given:  fixtures,
			when:   []string{"--skills", "$DIR", "run", "loop"},
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{"run failed: timeout:", "100ms"}},
		},
		{
			name:  "timeout, json",
			given: fixtures,
			when:  []string{"--skills", "$DIR", "run", "loop", "--json"},
			expect: expect{code: exitFailed, check: func(t *testing.T, r result) {
				wantRunError("timeout", "100ms")(t, r)
				// In milliseconds: at least the timeout, and no more than the whole command took
				// (a count of microseconds would be a thousand times that).
				if d := num(t, at(t, decode[obj](t, r.stdout), "duration_ms")); d < 100 || d > float64(r.elapsed)/float64(time.Millisecond) {
					t.Errorf("duration_ms = %v, want at least the 100ms timeout and at most the command's %v", d, r.elapsed)
				}
			}},
		},
		{
			name:   "module without the entrypoint",
			given:  fixtures,
			when:   []string{"--skills", "$DIR", "run", "noexport", "--json"},
			expect: expect{code: exitFailed, check: wantRunError("trap", `does not export "execute"`)},
		},
		{
			name:   "broken skill",
			given:  fixtures,
			when:   []string{"--skills", "$DIR", "run", "broken", "--json"},
			expect: expect{code: exitFailed, check: wantRunError("not_found", "broken", "colour")},
		},
		{
			name:   "broken skill, the reason in full",
			given:  fixtures,
			when:   []string{"--skills", "$DIR", "run", "broken"},
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{`skillbox: skill "broken" is broken: `, filepath.Join("broken", "skill.json") + `: colour: unknown field (allowed fields: id, name`}},
		},
		{
			name:  "instructions-only skill",
			given: fixtures,
			when:  []string{"--skills", "$DIR", "run", "guide"},
			expect: expect{code: exitFailed, emptyStdout: true, check: wantStderr(`skillbox: skill "guide" has instructions only (a SKILL.md, no code): ` +
				"it is read, not run; read it with skillbox instructions guide, or a model with load_skill\n")},
		},
	})
}

// wantStderr checks that stderr, its lines starting with one of skip removed, is want, with
// $SKILLS standing for the bundled skills directory.
func wantStderr(want string, skip ...string) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		var kept []string
		for _, l := range strings.SplitAfter(r.stderr, "\n") {
			if !slices.ContainsFunc(skip, func(p string) bool { return strings.HasPrefix(l, "skillbox: "+p) }) {
				kept = append(kept, l)
			}
		}
		if got, want := strings.Join(kept, ""), strings.ReplaceAll(want, "$SKILLS", bundled); got != want {
			t.Errorf("stderr:\n got %q\nwant %q", got, want)
		}
	}
}

// TestRunFixtures runs the small WAT fixtures: no Go-built module, so these are fast.
func TestRunFixtures(t *testing.T) {
	fixtures := func(t *testing.T) string {
		dir := t.TempDir()
		skillFixture(t, dir, "hello", manifest("hello", `"version":"0.1.0"`), "hello")
		skillFixture(t, dir, "echo", manifest("echo", `"parameters":{"n":{"type":"integer","default":7},"s":{"type":"string"}}`), "echo")
		skillFixture(t, dir, "controls", manifest("controls", ""), "controls")
		return dir
	}
	runCases(t, []cliCase{
		{
			name:   "envelope unwrapped",
			given:  fixtures,
			when:   []string{"--skills", "$DIR", "run", "hello"},
			expect: expect{code: exitOK, stdout: []string{"{\n  \"greeting\": \"hi\"\n}\n"}},
		},
		{
			name:  "envelope unwrapped, json",
			given: fixtures,
			when:  []string{"--skills", "$DIR", "run", "hello", "--json"},
			expect: expect{code: exitOK, check: wantRunJSON("hello", "0.1.0", func(t *testing.T, v any) {
				wantEqual(t, "result", v, obj{"greeting": "hi"})
			})},
		},
		{
			// --json is for programs: the result's bytes are passed on exact.
			name:  "controls and bidi overrides in a result stay exact with --json",
			given: fixtures,
			when:  []string{"--skills", "$DIR", "run", "controls", "--json"},
			expect: expect{code: exitOK, stdout: []string{
				"\"name\": \"evil\u202egnp.exe\"", "\"csi\": \"\u009b2J\"", "\"del\": \"a\x7fb\"",
				"\"tag\": \"\U000E0001\"", "\"invalid-byte\": \"\x9b2J\"", "\"key\u202e\": \"plain\"",
				`"escaped": "\u001b[2J tab\tnewline\n"`,
			}},
		},
		{
			name:  "defaults filled in before the module runs",
			given: fixtures,
			when:  []string{"--skills", "$DIR", "run", "echo", "--args", `{"s":"x"}`, "--json"},
			expect: expect{code: exitOK, check: wantRunJSON("echo", "", func(t *testing.T, v any) {
				wantEqual(t, "result", v, obj{"n": 7, "s": "x"})
			})},
		},
		{
			name:   "given argument wins over its default",
			given:  fixtures,
			when:   []string{"--skills", "$DIR", "run", "echo", "--args", `{"n":1}`},
			expect: expect{code: exitOK, stdout: []string{`"n": 1`}, notStdout: []string{"7"}},
		},
		{
			// runtime/run.go:40 starts Result.Logs as []LogEntry{}, but run.go:88 overwrites it with
			// call.Logs(), which is nil when the module logged nothing (hostfuncs/call.go:88
			// appends to a nil slice). A run that reaches the module and logs nothing prints
			// "logs": null, while a run that fails earlier (not_found, invalid_args) prints [].
			name:  "a run that logs nothing has logs: []",
			given: fixtures,
			when:  []string{"--skills", "$DIR", "run", "hello", "--json"},
			expect: expect{code: exitOK, check: func(t *testing.T, r result) {
				wantEqual(t, "logs", decode[obj](t, r.stdout)["logs"], []any{})
			}},
		},
	})
}

// TestFlagOrdering stresses the parser: global flags go before or after the command, command flags
// after it, flags interleave with the id, and "--" ends the flags.
func TestFlagOrdering(t *testing.T) {
	fixtures := func(t *testing.T) string {
		dir := t.TempDir()
		skillFixture(t, dir, "hello", manifest("hello", `"version":"0.1.0"`), "hello")
		return dir
	}
	asJSON := expect{code: exitOK, check: wantRunJSON("hello", "0.1.0", func(t *testing.T, v any) {
		wantEqual(t, "result", v, obj{"greeting": "hi"})
	})}
	human := expect{code: exitOK, stdout: []string{"{\n  \"greeting\": \"hi\"\n}\n"}, notStdout: []string{"run_id"}}
	cases := []struct {
		when   []string
		stdin  string
		expect expect
		bug    string
	}{
		{[]string{"run", "--skills", "$DIR", "hello", "--args", "{}", "--json"}, "", asJSON, ""},
		{[]string{"--skills", "$DIR", "run", "hello", "--args", "{}", "--json"}, "", asJSON, ""},
		{[]string{"--json", "--skills", "$DIR", "run", "hello", "--args", "{}"}, "", asJSON, ""},
		{[]string{"run", "hello", "--json", "--skills", "$DIR", "--args", "{}"}, "", asJSON, ""},
		{[]string{"run", "--json", "--args", "{}", "--skills", "$DIR", "hello"}, "", asJSON, ""},
		{[]string{"run", "hello", "--args={}", "--skills=$DIR", "--json"}, "", asJSON, ""},
		{[]string{"run", "--json", "--skills", "$DIR", "hello", "--args", "{}"}, "", asJSON, ""},
		{[]string{"run", "-v", "--json", "--skills", "$DIR", "hello"}, "", asJSON, ""},
		{[]string{"run", "--json=true", "--skills", "$DIR", "hello"}, "", asJSON, ""},
		{[]string{"--json", "run", "hello", "--skills", "$DIR"}, "", asJSON, ""},
		{[]string{"run", "--skills", "$DIR", "--json", "--", "hello"}, "", asJSON, ""},
		{[]string{"run", "--skills", "$DIR", "hello", "--args", "-", "--json"}, "{}", asJSON, ""},
		{[]string{"run", "--skills", "$DIR", "hello", "--cache-dir", cacheDir, "--json"}, "", asJSON, ""},
		// the first --skills wins a clash: the fixture hello, not the bundled one
		{[]string{"--skills", "$DIR", "run", "--skills", "$SKILLS", "hello", "--json"}, "", asJSON, ""},
		// a later --json=false undoes an earlier --json
		{[]string{"--json", "run", "--skills", "$DIR", "hello", "--json=false"}, "", human, ""},
		{[]string{"run", "--skills", "$DIR", "hello"}, "", human, ""},
		{[]string{"run", "hello", "--skills", "$DIR", "--args", "{}"}, "", human, ""},
		// run loads the one skill it runs (no scan): its log says so.
		{[]string{"-v", "run", "hello", "--skills", "$DIR"}, "", expect{code: exitOK, stdout: human.stdout, stderr: []string{"skill loaded alone", "run ok"}}, ""},
		{[]string{"run", "hello", "--skills", "$DIR", "-v", "--json"}, "", expect{code: exitOK, check: asJSON.check, stderr: []string{"skill loaded alone", "run ok"}}, ""},
		// after "--" everything is positional: --json is a second id
		{[]string{"run", "--skills", "$DIR", "hello", "--", "--json"}, "", expect{code: exitUsage, emptyStdout: true, stderr: []string{"run takes one skill id"}}, ""},
		{[]string{"--skills", "$DIR", "run", "--", "hello", "--json"}, "", expect{code: exitUsage, emptyStdout: true, stderr: []string{"run takes one skill id"}}, ""},
		// the value of --args is taken as is, even when it looks like a flag
		{[]string{"run", "--skills", "$DIR", "hello", "--args", "--json"}, "", expect{code: exitFailed, stderr: []string{"invalid_args", "not valid JSON"}}, ""},
		{[]string{"run", "--skills", "$DIR", "hello", "--jsn"}, "", expect{code: exitUsage, emptyStdout: true, stderr: []string{"unknown flag: --jsn (did you mean --json?)"}}, ""},
		{[]string{"run", "--skills", "$DIR", "hello", "--json=maybe"}, "", expect{code: exitUsage, emptyStdout: true, stderr: []string{`invalid argument "maybe" for "--json"`}}, ""},
	}
	var table []cliCase
	for _, c := range cases {
		table = append(table, cliCase{name: strings.Join(c.when, " "), given: fixtures, when: c.when, stdin: c.stdin, expect: c.expect, bug: c.bug})
	}
	runCases(t, table)
}

// controls.wat's result, as it prints for a person: every control, format character and
// invalid byte inside a string is a JSON escape, so it is still JSON and means the same.
const controlsHuman = `{
  "name": "evil\u202egnp.exe",
  "csi": "\u009b2J",
  "del": "a\u007fb",
  "isolates": "\u2066x\u2069",
  "marks": "\u200e\u200f\u061c",
  "zero-width": "a\u200bb",
  "tag": "\udb40\udc01",
  "line-separator": "a\u2028b",
  "invalid-byte": "\ufffd2J",
  "escaped": "\u001b[2J tab\tnewline\n",
  "key\u202e": "plain"
}
`

// TestRunEscapesResult runs controls.wat, whose result holds raw controls, bidi overrides and an
// invalid byte: what a person sees is escaped, and still JSON meaning the same as --json's.
func TestRunEscapesResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skillFixture(t, dir, "controls", manifest("controls", ""), "controls")
	r := cli(t, "", "--skills", dir, "run", "controls")
	if r.code != exitOK || r.stdout != controlsHuman {
		t.Fatalf("%s\nwant stdout:\n%s", r, controlsHuman)
	}
	var human, exact struct{ Result any }
	if err := json.Unmarshal([]byte(r.stdout), &human.Result); err != nil {
		t.Fatalf("the output for a person is not JSON: %v", err)
	}
	j := cli(t, "", "--skills", dir, "run", "controls", "--json")
	if err := json.Unmarshal([]byte(j.stdout), &exact); err != nil {
		t.Fatalf("%v\n%s", err, j)
	}
	// A decoder reads the lone 0x9b byte as U+FFFD, what the output for a person says.
	wantEqual(t, "result", human.Result, exact.Result)
}
