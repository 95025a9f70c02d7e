package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/run"
)

// A run's permission requests (docs/permissions.md) put to the person at the terminal: the
// question on stderr, the answer a line on stdin. The runtime decides what is asked and what an
// answer may be; this translates.

// The values of --ask.
const (
	askAuto   = "auto"   // ask when stdin and stderr are both terminals
	askAlways = "always" // ask on stderr and read stdin whatever they are (a program may answer)
	askNever  = "never"
)

// askFlag adds --ask to a command that runs a skill.
func askFlag(fs *pflag.FlagSet, e *env) {
	fs.StringVar(&e.ask, "ask", askAuto, "put a run's permission requests (the policy's ask section) to you: `auto` (when stdin and stderr are a terminal), always, or never")
}

// asker returns the Asker of a run of this command: nil when nobody is to be asked (--ask
// never, stdin or stderr not a terminal under auto, or stdin holding the arguments).
func (e *env) asker() (run.Asker, error) {
	switch e.ask {
	case askNever:
		return nil, nil
	case askAuto, "":
		if !isTerminal(e.stderr) || !isTerminalReader(e.stdin) {
			return nil, nil
		}
	case askAlways:
	default:
		return nil, fmt.Errorf("--ask %q: want %s, %s or %s", e.ask, askAuto, askAlways, askNever)
	}
	if e.args == "-" || e.stdinArg == "-" {
		return nil, nil // stdin is the run's input, not a person's answers
	}
	return &termAsker{in: e.stdin, out: e.stderr}, nil
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// termAsker asks one question at a time. Its lines come from one goroutine reading in, so a wait
// that ends (the request's deadline) leaves no read behind that would take the next answer.
type termAsker struct {
	in    io.Reader
	out   io.Writer
	mu    sync.Mutex // one question at a time
	once  sync.Once
	lines chan string
}

// maxAnswerLine bounds a line read as an answer.
const maxAnswerLine = 256

func (a *termAsker) start() {
	a.lines = make(chan string, 1)
	go func() {
		defer close(a.lines)
		sc := bufio.NewScanner(a.in)
		sc.Buffer(make([]byte, 0, maxAnswerLine), maxAnswerLine)
		for sc.Scan() {
			a.lines <- strings.TrimSpace(sc.Text())
		}
	}()
}

// errNoTerminal is a closed stdin: nobody can answer.
var errNoTerminal = errors.New("stdin is closed: nobody can answer")

// line waits for the next line until ctx ends.
func (a *termAsker) line(ctx context.Context) (string, error) {
	select {
	case l, ok := <-a.lines:
		if !ok {
			return "", errNoTerminal
		}
		return l, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (a *termAsker) Ask(ctx context.Context, q run.PermissionRequest) (run.PermissionAnswer, error) {
	a.once.Do(a.start)
	a.mu.Lock()
	defer a.mu.Unlock()
	for drained := false; !drained; { // what was typed before the question is not its answer
		select {
		case _, ok := <-a.lines:
			if !ok {
				return run.PermissionAnswer{}, errNoTerminal
			}
		default:
			drained = true
		}
	}
	maxMinutes, def := q.GrantMinutes()
	fmt.Fprintf(a.out, "\nskillbox: %s\n  o: allow for this run   f: allow %s for a time   d: deny\n  answer by %s [o/f/d, default d]: ",
		clean(q.Describe()), clean(q.Skill), q.Deadline.Local().Format(time.TimeOnly))
	l, err := a.line(ctx)
	if err != nil {
		fmt.Fprintln(a.out)
		return run.PermissionAnswer{}, err
	}
	switch strings.ToLower(l) {
	case "o", "once":
		return run.PermissionAnswer{Decision: run.AllowOnce}, nil
	case "f", "for":
	default:
		return run.PermissionAnswer{Decision: run.Deny}, nil
	}
	fmt.Fprintf(a.out, "  for how many minutes, 1 to %d [%d]: ", maxMinutes, def)
	l, err = a.line(ctx)
	if err != nil {
		fmt.Fprintln(a.out)
		return run.PermissionAnswer{}, err
	}
	m := def
	if l != "" {
		if m, err = strconv.ParseInt(l, 10, 64); err != nil || m < 1 || m > maxMinutes {
			fmt.Fprintf(a.out, "  %q is not a number of minutes from 1 to %d: denied\n", l, maxMinutes)
			return run.PermissionAnswer{Decision: run.Deny}, nil
		}
	}
	return run.PermissionAnswer{Decision: run.AllowFor, ForSeconds: m * 60}, nil
}
