package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
)

// A run needs a runner, whatever the face: a viewer, or a request that names no principal, is
// refused (permission_denied, access.ErrForbidden) before anything runs, and no record is kept.
func TestRunNeedsARunner(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx := context.Background()
	for want, who := range map[string]access.Principal{
		`running skill "hello" needs the runner role; "eve" has viewer`: {Key: "eve", Role: access.RoleViewer},
		"no principal was given": {},
	} {
		res, err := rt.Run(ctx, run.Request{Skill: "hello", Who: who})
		var re *run.Error
		if !errors.As(err, &re) || re.Kind != run.KindPermissionDenied || !errors.Is(err, access.ErrForbidden) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%+v: %v, want permission_denied saying %q", who, err, want)
		}
		if _, ok := rt.RunRecord(testAdmin, res.RunID); ok {
			t.Fatalf("%+v: a refused run was recorded", who)
		}
	}
	if res, err := rt.Run(ctx, run.Request{Skill: "hello", Who: access.Principal{Key: "ci", Role: access.RoleRunner}}); err != nil || !res.Success {
		t.Fatalf("a runner: %v", err)
	}
}
