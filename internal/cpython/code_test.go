package cpython

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

// A run given the code Code compiled runs that code, not the file: its result, its tracebacks'
// file and lines, and an empty standard input are those of a run that compiles the file.
func TestARunGivenItsCodeRunsIt(t *testing.T) {
	ctx := context.Background()
	c := compiledFor(t, 1024)
	src := "import sys\n\ndef execute(args, ctx):\n    if args == 'raise':\n        raise ValueError('line 5')\n    return {'stdin': sys.stdin.read(), 'n': args * 2}\n"
	dir := skillDir(t, map[string]string{"execute.py": src})
	code, err := c.Code(ctx, dir, "", []byte(src), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, &hostfuncs.Grant{})
	for _, given := range [][]byte{nil, code} {
		res, err := Run(ctx, c, Program{Dir: dir, Args: []byte(`21`), Code: given}, h)
		if err != nil || string(res.Value) != `{"stdin":"","n":42}` {
			t.Errorf("code given %v: %s, %v", given != nil, res.Value, err)
		}
		_, err = Run(ctx, c, Program{Dir: dir, Args: []byte(`"raise"`), Code: given}, h)
		if e := wantKind(t, err, scripterr.SkillError); e.Name != "ValueError" {
			t.Errorf("code given %v: %v", given != nil, e)
		}
	}
	var logs strings.Builder
	for _, l := range h.Lines() {
		logs.WriteString(l.Message + "\n")
	}
	if n := strings.Count(logs.String(), `File "/skill/execute.py", line 5, in execute`); n != 2 {
		t.Errorf("%d tracebacks name the file and line, not 2:\n%s", n, logs.String())
	}
	// The file on disk is not what runs: the code is.
	other := skillDir(t, map[string]string{"execute.py": "def execute(args, ctx):\n    return 'the file'\n"})
	if res, err := Run(ctx, c, Program{Dir: other, Args: []byte(`1`), Code: code}, h); err != nil || string(res.Value) != `{"stdin":"","n":2}` {
		t.Errorf("the run did not run the code it was given: %s, %v", res.Value, err)
	}
}

// Code runs none of the skill's code, and a file that does not compile is an error naming why.
func TestCodeRunsNothing(t *testing.T) {
	ctx := context.Background()
	c := compiledFor(t, 1024)
	src := "import sys\nsys.stdout.write(chr(65) * 9)\nopen('/tmp/ran', 'w')\n"
	code, err := c.Code(ctx, skillDir(t, map[string]string{"execute.py": src}), "", []byte(src), 1<<20, nil)
	if err != nil || bytes.Contains(code, []byte("AAAAAAAAA")) {
		t.Fatalf("the module's code ran while it was compiled: %q, %v", code, err)
	}
	bad := "def execute(args, ctx)\n    return 1\n"
	_, err = c.Code(ctx, skillDir(t, map[string]string{"execute.py": bad}), "", []byte(bad), 1<<20, nil)
	if e := wantKind(t, err, scripterr.SkillError); e.Name != "SyntaxError" {
		t.Errorf("a syntax error: %v", e)
	}
	if _, err := c.Code(ctx, skillDir(t, map[string]string{"execute.py": src}), "", []byte(src), 16, nil); err == nil {
		t.Error("code longer than max was returned")
	}
}

// A SyntaxError carries its place apart from its message: the line and the column (1-based, the
// column in bytes of the line: 'é' is two), where a check places the problem. A SyntaxError a skill raises itself, with a
// place that is not a number, is placed nowhere rather than trusted.
func TestASyntaxErrorSaysWhereItIs(t *testing.T) {
	ctx := context.Background()
	c := compiledFor(t, 1024)
	for _, tc := range []struct {
		src  string
		want scripterr.Syntax
	}{
		{"x = 1\ny = 'é' + (\n", scripterr.Syntax{Msg: "'(' was never closed", Line: 2, Column: 12}},
		{"def f():\nreturn 1\n", scripterr.Syntax{Msg: "expected an indented block after function definition on line 1", Line: 2, Column: 1}},
	} {
		_, err := c.Code(ctx, skillDir(t, map[string]string{"execute.py": tc.src}), "", []byte(tc.src), 1<<20, nil)
		if e := wantKind(t, err, scripterr.SkillError); e.Syntax == nil || *e.Syntax != tc.want {
			t.Errorf("%q: %+v, syntax %+v; want %+v", tc.src, e, e.Syntax, tc.want)
		}
	}
	src := "def execute(args, ctx):\n    raise SyntaxError('made up', ('f.py', 'one', -3, 'text'))\n"
	_, err := Run(ctx, c, Program{Dir: skillDir(t, map[string]string{"execute.py": src})}, newHost(t, &hostfuncs.Grant{}))
	if e := wantKind(t, err, scripterr.SkillError); e.Syntax == nil || *e.Syntax != (scripterr.Syntax{Msg: "made up"}) {
		t.Errorf("a raised SyntaxError with a made-up place: %+v, syntax %+v", e, e.Syntax)
	}
}
