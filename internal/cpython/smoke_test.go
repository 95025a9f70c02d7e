package cpython

import (
	"context"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

func TestSmoke(t *testing.T) {
	h := newHost(t, &hostfuncs.Grant{Env: map[string]string{"A": "a"}})
	res, err := runSkill(t, context.Background(), h, "import sys\ndef execute(args, ctx):\n    print('hi', sys.path)\n    return {'n': args['n']*2, 'e': ctx.env('A'), 'x': ctx.env('NOPE')}\n", `{"n":21}`)
	t.Logf("res %s err %v logs %q", res.Value, err, h.lines())
}
