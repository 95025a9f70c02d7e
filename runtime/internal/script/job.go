package script

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// Job is a run of a script: a script skill's execute, or a program of any skill.
type Job struct {
	// Skill is the id of the skill the script is of, Dir its directory.
	Skill, Dir string
	Lang       spec.Language
	Grant      *policy.Grant
	// Code is what the interpreter evaluates: the JavaScript bundle (for Python, execute.py,
	// read only to check it); Sum is its sha256, hex.
	Code, Sum string
	// Prog is the program run with Argv and Stdin; nil for execute.
	Prog  *registry.Program
	Argv  []string
	Stdin []byte
	// ProgramAt finds the skill's program at a path in its directory: the programs a Python
	// program may run as subprocesses (see nested.go). nil for execute, which may run none.
	ProgramAt func(rel string) (*registry.Program, *run.Error)
	// Admission and Ticket are the run's admission, which a nested run grows by NestedCharge
	// while it runs; nil leaves nested runs uncharged (a run outside the runtime's admission).
	Admission *engine.Admission
	Ticket    *engine.Ticket
	// Interp is the interpreter the run acquired for it (see Run).
	Interp *engine.Interp
	// Memory is the run's metered allocator, which a Python run's memory must be made by (its
	// interpreter's memory starts from an image); a JavaScript run's comes from its context.
	Memory *engine.MemoryMeter
}

// ExecuteJob prepares a run of script skill s's execute: its code, checked to be the version's.
// The error is Skill.Script's: the code changed, or no longer reads or bundles.
func ExecuteJob(ctx context.Context, s *registry.Skill) (*Job, error) {
	code, err := s.Script(ctx)
	if err != nil {
		return nil, err
	}
	// Script checked that code is the version's: its sha256 is the verdict's.
	return &Job{Skill: s.ID(), Dir: s.Dir(), Lang: s.Lang(), Grant: s.Grant(), Code: code, Sum: s.State().Hash}, nil
}

// ProgramJob prepares a run of the program req.Script of s, under its programs' grant.
func ProgramJob(ctx context.Context, s *registry.Skill, req run.Request) (*Job, *run.Error) {
	prog, rerr := s.ResolveProgram(req.Script)
	if rerr != nil {
		return nil, rerr
	}
	if s.ProgramsErr() != nil {
		return nil, run.Errorf(run.KindNotFound, s.ID(), errors.Join(run.ErrBroken, s.ProgramsErr()), "the programs of skill %q cannot run: %s",
			s.ID(), strings.Join(s.RemoteProblems(s.ProgramsErr()), "; "))
	}
	job := &Job{Skill: s.ID(), Dir: s.Dir(), Lang: prog.Lang, Grant: s.ProgramGrant(), Prog: prog, Argv: req.Argv, Stdin: req.Stdin,
		ProgramAt: s.ProgramAt}
	if job.Grant == nil || strings.HasPrefix(prog.Rel, spec.ScriptsDir+"/") && !s.ScriptsDir() { // loaded without a scripts/ directory, which has appeared since
		return nil, run.Errorf(run.KindNotFound, s.ID(), run.ErrModuleChanged, "skill %q has changed since it was loaded; reload the skills and run it again", s.ID())
	}
	if max := job.Grant.Limits.MaxOutputBytes; int64(len(req.Stdin)) > max {
		return nil, run.Errorf(run.KindInvalidArgs, s.ID(), nil, "standard input of %d bytes is more than maxOutputBytes (%d)", len(req.Stdin), max)
	}
	switch prog.Lang {
	case spec.LangJavaScript, spec.LangTypeScript:
		b, err := s.Bundle(ctx, prog.Rel, true)
		if err != nil {
			return nil, run.Errorf(run.KindInvalidArgs, s.ID(), err, "%s", strings.Join(s.RemoteProblems(&spec.SkillError{ID: s.ID(), Problems: []*spec.ManifestError{registry.ScriptProblemAt(s, prog.Rel, err)}}), "; "))
		}
		sum := sha256.Sum256([]byte(b.Code))
		job.Code, job.Sum = b.Code, hex.EncodeToString(sum[:])
	}
	return job, nil
}

// Charge is what a script's run under grant may hold of the host's memory while it runs:
// its memory limit (the interpreter's whole instance, metered like a module's memories), the
// wasm call stack (bounded: engine.ScriptStack), one host call's buffers and the logs, the code
// it evaluates (held as Go text and copied into the instance), and the run's overhead.
func Charge(grant *policy.Grant, codeBytes int64) int64 {
	l := grant.Limits
	io := max(l.MaxFetchBytes, l.MaxFileBytes, l.MaxWriteBytes, grant.OutputFileBytes())
	return l.MemoryMiB<<20 + engine.ScriptStack() + io + l.MaxLogBytes + 2*codeBytes + 2*l.MaxOutputBytes + engine.RunOverhead
}

// NestedCharge is what one nested run (a program's subprocess, see nested.go) adds to its run's
// charge while it runs: not its memory, which is the run's (its meter's limit is what the parent
// left), but its own interpreter's wasm stack, host call buffers and overhead, as Charge counts
// them, and its output held twice more on its way back to its parent: captured, then encoded
// (base64, then that in JSON) for the reply.
func NestedCharge(grant *policy.Grant) int64 {
	return Charge(grant, 0) - grant.Limits.MemoryMiB<<20 + 6*grant.Limits.MaxOutputBytes
}
