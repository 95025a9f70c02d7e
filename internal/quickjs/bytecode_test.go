package quickjs

import (
	"context"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

// A run from bytecode gives what a run from source gives, line numbers in stacks included; the
// compile reports a syntax error as the run would.
func TestBytecode(t *testing.T) {
	ctx := context.Background()
	c := compiledFor(t, 1024)
	src := skill(`(args, ctx) => {
  if (args.fail) {
    throw new Error("asked to fail");
  }
  return {n: args.n * 2, r: Math.random() < 1};
}`)
	code, err := c.Bytecode(ctx, src, "skill.js", 0)
	if err != nil || len(code) == 0 {
		t.Fatalf("%d bytes, %v", len(code), err)
	}
	h := newHost(t, &hostfuncs.Grant{})
	res, err := Run(ctx, c, Program{Bytecode: code, Args: []byte(`{"n":21}`)}, h)
	if err != nil || string(res.Value) != `{"n":42,"r":true}` {
		t.Fatalf("%s %v", res.Value, err)
	}
	_, err = Run(ctx, c, Program{Bytecode: code, Args: []byte(`{"fail":true}`)}, h)
	if e := wantKind(t, err, scripterr.SkillError); !strings.Contains(e.Stack, "skill.js:3") {
		t.Fatalf("stack %q", e.Stack)
	}
	_, err = c.Bytecode(ctx, "var __skill = (", "skill.js", 0)
	if e := wantKind(t, err, scripterr.SkillError); e.Name != "SyntaxError" {
		t.Fatalf("%+v", e)
	}
	if _, err := c.Bytecode(ctx, src, "skill.js", 16); err == nil || !strings.Contains(err.Error(), "more than 16") {
		t.Fatalf("bound: %v", err)
	}
}
