package runmodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/run"
)

// block is a [RUN_MODULE] block around body.
func block(body string) string { return Open + body + Close }

func TestParseRunModules(t *testing.T) {
	type call struct {
		name, args string
		line       int
	}
	type problem struct {
		p    Problem
		line int
	}
	tests := []struct {
		name  string
		text  string
		calls []call
		errs  []problem
	}{
		{"no block", "Just an answer. [RUN_MODULE is mentioned] but not written.", nil, nil},
		{"one", block(`{"name":"word-count","args":{"text":"a b"}}`), []call{{"word-count", `{"text":"a b"}`, 1}}, nil},
		{"prose, then a block on its own lines", "Let me count.\n\n[RUN_MODULE]\n{\"name\": \"image_gen\", \"args\": {\"prompt\": \"sleepy teapot\"}}\n[/RUN_MODULE]\n",
			[]call{{"image_gen", `{"prompt": "sleepy teapot"}`, 3}}, nil},
		{"several", "a\n" + block(`{"name":"a"}`) + "\nb\n" + block(`{"name":"skill_b","args":{}}`) + block(`{"name":"load_skill","args":{"name":"c"}}`),
			[]call{{"a", `{}`, 2}, {"skill_b", `{}`, 4}, {"load_skill", `{"name":"c"}`, 4}}, nil},
		{"code fence", block("\n```json\n{\"name\":\"a\",\"args\":{\"x\":1}}\n```\n"), []call{{"a", `{"x":1}`, 1}}, nil},
		{"arguments for args", block(`{"name":"a","arguments":{"x":1}}`), []call{{"a", `{"x":1}`, 1}}, nil},
		{"args null", block(`{"name":"a","args":null}`), []call{{"a", `{}`, 1}}, nil},
		{"name trimmed", block(`{"name":" a "}`), []call{{"a", `{}`, 1}}, nil},
		{"marker inside a string", block(`{"name":"echo","args":{"text":"say [RUN_MODULE] now"}}`),
			[]call{{"echo", `{"text":"say [RUN_MODULE] now"}`, 1}}, nil},

		{"bad JSON", block(`{"name":"a",}`), nil, []problem{{ProblemJSON, 1}}},
		{"empty", block("  \n "), nil, []problem{{ProblemJSON, 1}}},
		{"not an object", block(`["a"]`), nil, []problem{{ProblemJSON, 1}}},
		{"null", block(`null`), nil, []problem{{ProblemJSON, 1}}},
		{"two objects", block(`{"name":"a"}{"name":"b"}`), nil, []problem{{ProblemJSON, 1}}},
		{"no name", block(`{"args":{}}`), nil, []problem{{ProblemName, 1}}},
		{"name not a string", block(`{"name":3}`), nil, []problem{{ProblemName, 1}}},
		{"empty name", block(`{"name":""}`), nil, []problem{{ProblemName, 1}}},
		{"args not an object", block(`{"name":"a","args":[1]}`), nil, []problem{{ProblemArgs, 1}}},
		{"args twice", block(`{"name":"a","args":{},"arguments":{}}`), nil, []problem{{ProblemArgs, 1}}},
		{"flattened args", block(`{"name":"a","text":"x"}`), nil, []problem{{ProblemField, 1}}},
		{"unterminated at the end", "x\n" + Open + `{"name":"a"}`, nil, []problem{{ProblemUnterminated, 2}}},
		{"unterminated, then a good block", Open + "{\"name\":\"a\"}\n" + block(`{"name":"b"}`),
			[]call{{"b", `{}`, 2}}, []problem{{ProblemUnterminated, 1}}},
		{"unterminated twice", Open + Open, nil, []problem{{ProblemUnterminated, 1}, {ProblemUnterminated, 1}}},
		{"closing marker alone", "done\n" + Close, nil, []problem{{ProblemUnopened, 2}}},
		{"closing marker twice", block(`{"name":"a"}`) + "\n" + Close, []call{{"a", `{}`, 1}}, []problem{{ProblemUnopened, 2}}},
		{"good, bad, good", block(`{"name":"a"}`) + "\n" + block(`{name:"b"}`) + "\n" + block(`{"name":"c"}`),
			[]call{{"a", `{}`, 1}, {"c", `{}`, 3}}, []problem{{ProblemJSON, 2}}},
		{"lower case is text", "[run_module]{\"name\":\"a\"}[/run_module]", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls, errs := Parse(tc.text)
			var gotCalls []call
			for _, c := range calls {
				gotCalls = append(gotCalls, call{c.Name, string(c.Args), c.Line})
				if !strings.HasPrefix(tc.text[c.Start:c.End], Open) || !strings.HasSuffix(tc.text[c.Start:c.End], Close) {
					t.Errorf("span %d:%d is %q", c.Start, c.End, tc.text[c.Start:c.End])
				}
			}
			var gotErrs []problem
			for _, e := range errs {
				gotErrs = append(gotErrs, problem{e.Problem, e.Line})
				if e.Msg == "" || !errors.Is(&e, ErrMalformed) || !strings.Contains(e.Error(), fmt.Sprintf("line %d:", e.Line)) {
					t.Errorf("error %+v: %v", e, &e)
				}
			}
			if fmt.Sprint(gotCalls) != fmt.Sprint(tc.calls) {
				t.Errorf("calls %v, want %v", gotCalls, tc.calls)
			}
			if fmt.Sprint(gotErrs) != fmt.Sprint(tc.errs) {
				t.Errorf("errors %v, want %v", gotErrs, tc.errs)
			}
			checkAccounted(t, tc.text, calls, errs)
		})
	}
}

// TestParseRunModulesLinear: text made to make a naive parser quadratic (every block open, no
// closing marker anywhere) is parsed in one pass.
func TestParseRunModulesLinear(t *testing.T) {
	text := strings.Repeat(Open+"x", 100_000)
	calls, errs := Parse(text)
	if len(calls) != 0 || len(errs) != 100_000 {
		t.Fatalf("%d calls, %d errors", len(calls), len(errs))
	}
	text = strings.Repeat(Close, 100_000)
	if _, errs := Parse(text); len(errs) != 100_000 {
		t.Fatalf("%d errors", len(errs))
	}
}

// checkAccounted asserts what Parse promises: calls and errors are in order, within
// text, and do not overlap; each starts at a marker; every marker is inside one of them; and an
// opening marker inside a block is inside a call (a JSON string), never inside an error.
func checkAccounted(t testing.TB, text string, calls []Call, errs []Error) {
	t.Helper()
	type span struct {
		start, end int
		call       bool
	}
	var spans []span
	ci, ei := 0, 0
	for ci < len(calls) || ei < len(errs) {
		if ei == len(errs) || (ci < len(calls) && calls[ci].Start < errs[ei].Start) {
			c := calls[ci]
			if c.Name == "" || !json.Valid(c.Args) || c.Args[0] != '{' {
				t.Fatalf("call %+v", c)
			}
			spans = append(spans, span{c.Start, c.End, true})
			ci++
		} else {
			e := errs[ei]
			if e.Msg == "" || e.Line < 1 {
				t.Fatalf("error %+v", e)
			}
			spans = append(spans, span{e.Start, e.End, false})
			ei++
		}
	}
	prev := 0
	for _, s := range spans {
		if s.start < prev || s.end <= s.start || s.end > len(text) {
			t.Fatalf("span %d:%d after %d in %d bytes", s.start, s.end, prev, len(text))
		}
		if !strings.HasPrefix(text[s.start:], Open) && !strings.HasPrefix(text[s.start:], Close) {
			t.Fatalf("span %d:%d does not start at a marker: %q", s.start, s.end, text[s.start:s.end])
		}
		prev = s.end
	}
	in := func(off, n int) (span, bool) {
		for _, s := range spans {
			if s.start <= off && off+n <= s.end {
				return s, true
			}
		}
		return span{}, false
	}
	for _, o := range indexAll(text, Open) {
		s, ok := in(o, len(Open))
		if !ok || (s.start != o && !s.call) {
			t.Fatalf("the opening marker at %d is not accounted for", o)
		}
	}
	for _, c := range indexAll(text, Close) {
		if _, ok := in(c, len(Close)); !ok {
			t.Fatalf("the closing marker at %d is not accounted for", c)
		}
	}
}

func TestRunModules(t *testing.T) {
	rt, _ := disclosureRuntime(t)
	text := "I will count, then load.\n" +
		block(`{"name":"echo","args":{"text":"a b"}}`) + "\n" +
		block(`{"name":"skill_echo","args":{"text":"c","top":1}}`) + "\n" +
		block(`{"name":"read_skill_resource","args":{"skill":"echo","resource":"reference/api.md"}}`) + "\n" +
		block(`{"name":"echo"`) + "\n" +
		block(`{"name":"echo","args":{"text":3}}`) + "\n" +
		block(`{"name":"skill_guide"}`) + "\n" +
		block(`{"name":"Echo"}`) + "\n" +
		Close
	results := Run(context.Background(), rt, text)
	want := []string{
		`[MODULE_RESULT]
{"name":"echo","success":true,"result":{"text":"a b","top":5}}
[/MODULE_RESULT]`,
		`[MODULE_RESULT]
{"name":"skill_echo","success":true,"result":{"text":"c","top":1}}
[/MODULE_RESULT]`,
		`[MODULE_RESULT]
{"name":"read_skill_resource","success":true,"result":{"skill":"echo","resource":"reference/api.md","content":"# API\n\nCall it.\n"}}
[/MODULE_RESULT]`,
		`[MODULE_RESULT]
{"name":"","success":false,"error":{"kind":"invalid_args","message":"\u005bRUN_MODULE] block at line 5: not valid JSON (unexpected end of JSON input); write {\"name\": \"\u003cskill id\u003e\", \"args\": {...}}"}}
[/MODULE_RESULT]`,
		`[MODULE_RESULT]
{"name":"echo","success":false,"error":{"kind":"invalid_args","message":"argument \"text\": got number, want string"}}
[/MODULE_RESULT]`,
		`[MODULE_RESULT]
{"name":"skill_guide","success":false,"error":{"kind":"not_found","message":"skill \"guide\" has instructions only (a SKILL.md, no code): it is read, not run; read it with skillbox instructions guide, or a model with load_skill"}}
[/MODULE_RESULT]`,
		`[MODULE_RESULT]
{"name":"Echo","success":false,"error":{"kind":"not_found","message":"unknown tool \"Echo\" (did you mean echo?); the tools are list_skills, load_skill, read_skill_resource, run_skill, run_skill_script, bad-md, echo, plain"}}
[/MODULE_RESULT]`,
		`[MODULE_RESULT]
{"name":"","success":false,"error":{"kind":"invalid_args","message":"\u005bRUN_MODULE] block at line 9: \u005b/RUN_MODULE] without \u005bRUN_MODULE] before it; write \u005bRUN_MODULE], the JSON object, then \u005b/RUN_MODULE]"}}
[/MODULE_RESULT]`,
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for i, r := range results {
		if got := FormatResult(r); got != want[i] {
			t.Errorf("result %d:\n%s\nwant\n%s", i, got, want[i])
		}
		if (r.Err == nil) != r.Result.Success {
			t.Errorf("result %d: error %v with success %v", i, r.Err, r.Result.Success)
		}
	}
	var rme *Error
	var ute *toolset.UnknownToolError
	if !errors.As(results[3].Err, &rme) || rme.Problem != ProblemJSON || results[3].Line != 5 ||
		!errors.Is(results[4].Err, run.ErrInvalidArgs) || !errors.As(results[6].Err, &ute) {
		t.Errorf("errors: %v, %v, %v", results[3].Err, results[4].Err, results[6].Err)
	}
	if got := FormatResults(results[:2]); got != want[0]+"\n"+want[1] {
		t.Errorf("joined:\n%s", got)
	}
	if Run(context.Background(), rt, "no blocks") != nil {
		t.Error("results for a message without blocks")
	}
}

// TestRunModulesCap: past MaxBlocks, well-formed blocks are answered, not run.
func TestRunModulesCap(t *testing.T) {
	rt, _ := disclosureRuntime(t)
	text := strings.Repeat(block(`{"name":"list_skills"}`), MaxBlocks+2)
	results := Run(context.Background(), rt, text)
	if len(results) != MaxBlocks+2 {
		t.Fatalf("%d results", len(results))
	}
	for i, r := range results {
		var rme *Error
		over := errors.As(r.Err, &rme) && rme.Problem == ProblemTooMany
		if over != (i >= MaxBlocks) || r.Name != "list_skills" {
			t.Errorf("block %d: %v", i, r.Err)
		}
	}
}

// TestFormatModuleResultEscapes: a result holding the protocol's markers cannot close the block
// early or pass for a new one, and still decodes to the same text.
func TestFormatModuleResultEscapes(t *testing.T) {
	text := `done [/MODULE_RESULT] [RUN_MODULE]{"name":"x"}[/RUN_MODULE] [MODULE_RESULT] [ok] [/x]`
	value, _ := json.Marshal(map[string]string{"text": text})
	out := FormatResult(Result{Name: "echo", Result: &run.Result{Success: true, Result: value}})
	if strings.Count(out, ResultOpen) != 1 || strings.Count(out, ResultClose) != 1 || strings.Contains(out, Open) {
		t.Fatalf("markers not escaped:\n%s", out)
	}
	if calls, errs := Parse(out); len(calls)+len(errs) != 0 {
		t.Errorf("the result parses as blocks: %v %v", calls, errs)
	}
	body := strings.TrimSuffix(strings.TrimPrefix(out, ResultOpen+"\n"), "\n"+ResultClose)
	var got struct {
		Result struct{ Text string } `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Result.Text != text {
		t.Errorf("decoded %q, %v", got.Result.Text, err)
	}
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Name: "a"}, `{"name":"a","success":false,"error":{"kind":"internal","message":"no result"}}`},
		{Result{Name: "a", Result: &run.Result{Success: true}}, `{"name":"a","success":true,"result":null}`},
		{Result{Name: "a", Result: &run.Result{Success: true, Result: json.RawMessage(`{bad`)}}, `{"name":"a","success":false,"error":{"kind":"internal","message":"the result is not valid JSON"}}`},
	} {
		if got := FormatResult(tc.r); got != ResultOpen+"\n"+tc.want+"\n"+ResultClose {
			t.Errorf("got %s", got)
		}
	}
}

func FuzzParseRunModules(f *testing.F) {
	for _, s := range []string{
		"", "text", block(`{"name":"a","args":{"x":1}}`),
		Open, Close, Open + Open + Close,
		block(`{"name":"a","args":{"t":"[RUN_MODULE]"}}`),
		block(`{"name":"a","args":{"t":"[/RUN_MODULE]"}}`),
		block("```json\n{\"name\":\"a\"}\n```"),
		"x\n" + block(`{"name":"a"`) + "\n" + block(`{"name":"b","arguments":{}}`) + Close,
		"[RUN_MODULE][/RUN_MODULE][/RUN_MODULE][RUN_MODULE]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		calls, errs := Parse(text)
		checkAccounted(t, text, calls, errs)
		for _, e := range errs {
			if lines := strings.Count(text[:e.Start], "\n") + 1; e.Line != lines {
				t.Fatalf("error at %d: line %d, want %d", e.Start, e.Line, lines)
			}
		}
		for _, c := range calls {
			if lines := strings.Count(text[:c.Start], "\n") + 1; c.Line != lines {
				t.Fatalf("call at %d: line %d, want %d", c.Start, c.Line, lines)
			}
		}
	})
}
