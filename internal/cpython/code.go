package cpython

import (
	"context"
	"fmt"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/memimage"
)

// Code compiles source, the text of a skill's Entry (in dir; "execute.py" when empty), as an
// import of the file would, in a fresh instance of c like a run's, and returns the code object
// marshalled: a run given it (Program.Code) does not compile the file again. No code of the skill
// runs, and the file is not read, so what Code returns depends on source alone: the caller keeps
// it for that text, never for another (marshalled code is trusted as the interpreter's own). The
// instance's memory is made by mem (nil: Go slices); max bounds the code's size.
//
// # Errors
//
// An *Error when the file does not compile (a SyntaxError is KindSkillError), or its code is
// more than max bytes; Run's errors otherwise. A caller that gets one runs the source instead,
// where the same failure is the run's to report.
func (c *Compiled) Code(ctx context.Context, dir, entry string, source []byte, max int64, mem memimage.Allocator) ([]byte, error) {
	res, err := Run(ctx, c, Program{Dir: dir, Entry: entry, Stdin: source, compile: true, Memory: mem,
		Limits: Limits{MaxOutputBytes: max}}, noHost{})
	switch {
	case err != nil:
		return nil, err
	case res.StdoutDropped > 0:
		return nil, fmt.Errorf("cpython: the code of %s is more than %d bytes", entry, max)
	case len(res.Stdout) == 0:
		return nil, fmt.Errorf("cpython: compiling %s wrote no code", entry)
	}
	return res.Stdout, nil
}

// noHost is the host of a compilation, which runs no skill code and so asks for nothing: every
// request is refused.
type noHost struct{}

var errCompiling = &hostfuncs.Refusal{Status: hostfuncs.StatusDenied, Message: "nothing is granted while a skill is compiled"}

func (noHost) Fetch(context.Context, hostfuncs.FetchRequest) (*hostfuncs.FetchResponse, error) {
	return nil, errCompiling
}
func (noHost) Env(context.Context, string) (string, error)      { return "", errCompiling }
func (noHost) ReadFile(context.Context, string) ([]byte, error) { return nil, errCompiling }
func (noHost) WriteFile(context.Context, string, []byte) error  { return errCompiling }
func (noHost) Log(string, string, string)                       {}
