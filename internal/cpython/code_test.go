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
