package modules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/run"
)

// ErrNoModule is matched by the error of [Find] for a name that is no module of the catalog.
var ErrNoModule = errors.New("no such module")

// Find returns the module name within the skills r shows a model (toolset.ListSkills): a bare
// name must be one skill's module alone; "<skill>/<module>" names one skill's. A skill whose
// modules cannot be read is skipped, and named in the error when no module is found.
func Find(r toolset.Runner, name string) (skill string, m Module, err error) {
	want, only := name, ""
	if s, mod, ok := strings.Cut(name, "/"); ok {
		only, want = s, mod
	}
	var found []string
	var broken []string
	for _, s := range toolset.ListSkills(r) {
		if only != "" && s.ID != only {
			continue
		}
		sk, err := r.Skill(s.ID)
		if err != nil {
			continue
		}
		mods, err := Load(sk.Dir())
		if err != nil {
			broken = append(broken, fmt.Sprintf("%s: %v", s.ID, err))
			continue
		}
		for _, mod := range mods {
			if mod.Name == want {
				skill, m = s.ID, mod
				found = append(found, s.ID+"/"+mod.Name)
			}
		}
	}
	switch {
	case len(found) == 1:
		return skill, m, nil
	case len(found) > 1:
		return "", Module{}, &run.Error{Kind: run.KindInvalidArgs, Message: fmt.Sprintf("module %q is in %d skills: name one, as %s", name, len(found), strings.Join(found, " or "))}
	}
	msg := fmt.Sprintf("no module %q in the skills offered", name)
	if len(broken) > 0 {
		slices.Sort(broken)
		msg += " (the modules of these could not be read: " + strings.Join(broken, "; ") + ")"
	}
	return "", Module{}, &run.Error{Kind: run.KindNotFound, Message: msg, Err: ErrNoModule}
}

// Run runs module m of skill with args: checked against the arguments its module.json
// declares, then given to its program as {"args": ...} on standard input, through the
// toolset's run_skill_script (so the run is the caller's, under the skill's programs' grant).
// The program's standard output, one JSON value, is the result; an exit code other than 0, or
// output that is not JSON, is a skill_error that says so with the program's standard error.
func Run(ctx context.Context, r toolset.Runner, skill string, m Module, args json.RawMessage) (*run.Result, error) {
	start := time.Now()
	fail := func(kind run.ErrorKind, format string, a ...any) (*run.Result, error) {
		msg := fmt.Sprintf("module %s/%s: ", skill, m.Name) + fmt.Sprintf(format, a...)
		res := &run.Result{Skill: skill, Logs: []run.LogEntry{}, Error: &run.ResultError{Kind: kind, Message: msg},
			DurationMs: float64(time.Since(start).Microseconds()) / 1000}
		res.Settle()
		return res, &run.Error{Kind: kind, Skill: skill, Message: msg}
	}
	if m.schema == nil {
		return fail(run.KindInternal, "its arguments were not read (Load reads a module)")
	}
	prepared, err := m.schema.Prepare(args)
	if err != nil {
		var re *run.Error
		if errors.As(err, &re) {
			return fail(re.Kind, "%s", re.Message)
		}
		return fail(run.KindInvalidArgs, "%v", err)
	}
	stdin, _ := json.Marshal(map[string]json.RawMessage{"args": prepared})
	call, _ := json.Marshal(map[string]any{"skill": skill, "script": m.Program, "args": append([]string{}, m.Argv...), "stdin": string(stdin)})
	res, err := toolset.Call(ctx, r, toolset.ToolRunSkillScript, call)
	if err != nil {
		return res, err
	}
	var out run.ProgramOutput
	if err := json.Unmarshal(res.Result, &out); err != nil {
		return fail(run.KindInternal, "its program's output could not be read: %v", err)
	}
	if out.ExitCode != 0 {
		return withFailure(res, run.KindSkillError, fmt.Sprintf("module %s/%s: its program exited %d: %s", skill, m.Name, out.ExitCode, tail(out.Stderr)))
	}
	value := json.RawMessage(strings.TrimSpace(out.Stdout))
	if out.StdoutDropped > 0 {
		return withFailure(res, run.KindOutputLimit, fmt.Sprintf("module %s/%s: its program printed more than the run may output (%d bytes cut): its result is not whole", skill, m.Name, out.StdoutDropped))
	}
	if !json.Valid(value) {
		return withFailure(res, run.KindSkillError, fmt.Sprintf("module %s/%s: its program printed no JSON value on standard output (%q); a module prints its result as JSON", skill, m.Name, head(out.Stdout)))
	}
	done := *res
	done.Result = value
	return &done, nil
}

// withFailure is res (the program's run) failed with kind and msg: the run's id, usage and logs
// stay. The run's record keeps the program's outcome (it ran, and exited as it did); this is
// the module's.
func withFailure(res *run.Result, kind run.ErrorKind, msg string) (*run.Result, error) {
	out := *res
	out.Success, out.Result = false, nil
	out.Error = &run.ResultError{Kind: kind, Message: msg}
	out.Settle()
	return &out, &run.Error{Kind: kind, Skill: res.Skill, Message: msg}
}

// tail is the end of a program's standard error, enough to say why it failed.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(nothing on standard error)"
	}
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

// head is the start of what a program printed.
func head(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
