package broker

import (
	"context"
	"encoding/base64"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// Runner is a Host that runs another program of the skill, as a subprocess of the program
// asking: a Python program's subprocess.run([sys.executable, "other.py", ...]). The host decides
// which programs may run, under what grant and within what bounds; the broker only carries the
// request and the answer.
type Runner interface {
	RunProgram(ctx context.Context, req ProgramRequest) (*ProgramReply, error)
}

// ProgramRequest is a run op: the program's file in the guest (Path, e.g.
// "/skill/scripts/other.py"), its module name when run as python -m (Module), its arguments,
// working directory and standard input; Merge sends its stderr to its stdout; TimeoutMs, when
// non-zero, ends it sooner than the run's deadline (subprocess's timeout=).
type ProgramRequest struct {
	Path, Module string
	Argv         []string
	Cwd          string
	Stdin        []byte
	Merge        bool
	TimeoutMs    int64
}

// ProgramReply is a run op's answer: what a parent process sees of its child. Stdout and Stderr
// are base64; the *Dropped fields count the bytes cut past the run's output limit; TimedOut says
// the child was stopped at the request's TimeoutMs.
type ProgramReply struct {
	Exit          int    `json:"exit"`
	Stdout        string `json:"stdout"`
	Stderr        string `json:"stderr"`
	StdoutDropped int64  `json:"stdout_dropped,omitempty"`
	StderrDropped int64  `json:"stderr_dropped,omitempty"`
	TimedOut      bool   `json:"timed_out,omitempty"`
}

// run serves a run op. It runs on the guest's goroutine, without an operation's timeout: the
// child is bounded by the run's deadline (or the request's own timeout), which the host's
// runner honours; abandoning it would leave it working in the run's files after the run ended.
func (b *Broker) run(ctx context.Context, req Request) (any, error) {
	r, ok := b.Host.(Runner)
	if !ok {
		return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusDenied,
			Message: "subprocess: only a skill's program may run its other programs, and this run is not one"}
	}
	stdin, err := base64.StdEncoding.DecodeString(req.Stdin)
	if err != nil {
		return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: "run: stdin is not valid base64"}
	}
	if req.Path == "" {
		return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: "run: path names no program"}
	}
	if req.TimeoutMs < 0 {
		return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: "run: timeout_ms is negative"}
	}
	return r.RunProgram(ctx, ProgramRequest{Path: req.Path, Module: req.Module, Argv: req.Argv, Cwd: req.Cwd,
		Stdin: stdin, Merge: req.Merge, TimeoutMs: req.TimeoutMs})
}
