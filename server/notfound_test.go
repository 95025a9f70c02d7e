package server

import (
	"path/filepath"
	"strings"
	"testing"
)

// Over HTTP a skill that is not there is named with the ids nearest to it, and the operator's
// directories stay on the host: the runtime's message for a client, for a run and for every skill
// page alike.
func TestNotFoundNamesNearestIDs(t *testing.T) {
	t.Parallel()
	env := runsEnv(t)
	dir := filepath.Dir(env.rt.Skills()[0].Dir()) // the skills directory
	for _, tc := range []struct {
		name string
		r    reply
		want string
	}{
		{"run", post(t, env.ts.URL+"/v1/skills/ehco/runs", `{}`), `no skill "ehco"; did you mean echo?`},
		{"runs route", post(t, env.ts.URL+"/v1/runs", `{"skill":"ehco"}`), `no skill "ehco"; did you mean echo?`},
		{"skill", get(t, env.ts.URL+"/v1/skills/ehco"), `no skill "ehco"; did you mean echo?`},
		{"instructions", get(t, env.ts.URL+"/v1/skills/gide/instructions"), `no skill "gide"; did you mean guide?`},
		{"resource", get(t, env.ts.URL+"/v1/skills/helo/resources/x.md"), `no skill "helo"; did you mean hello?`},
		{"instructions only", post(t, env.ts.URL+"/v1/skills/guide/runs", `{}`),
			`skill "guide" has instructions only (a SKILL.md, no code): it is read, not run; read it with skillbox instructions guide, or a model with load_skill`},
	} {
		e := wantError(t, tc.r, 404, "not_found")
		if e.Error.Message != tc.want {
			t.Errorf("%s: message %q, want %q", tc.name, e.Error.Message, tc.want)
		}
		if strings.Contains(string(tc.r.body), dir) {
			t.Errorf("%s: the body names a directory of the host: %s", tc.name, tc.r.body)
		}
	}
	e := wantError(t, post(t, env.ts.URL+"/v1/skills/broken/runs", `{}`), 409, "skill_broken")
	if want := `skill "broken" is broken: broken/skill.json: colour: unknown field`; !strings.HasPrefix(e.Error.Message, want) || strings.Contains(e.Error.Message, dir) {
		t.Errorf("broken: message %q, want %q... and no directory", e.Error.Message, want)
	}
}
