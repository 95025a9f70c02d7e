package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/run"
)

// maxProgramExit is the most a program's exit code can be as this process's: a shell reads exit
// codes modulo 256.
const maxProgramExit = 255

var cmdScript = &command{
	summary: "run a program from a skill's scripts/ directory in the sandbox, with arguments and stdin",
	usage:   "<skill> <script> [args...] [--stdin TEXT | --stdin @FILE | --stdin -]  (put -- before args that start with -; exits with the program's exit code)",
	flags: func(fs *pflag.FlagSet, e *env) {
		askFlag(fs, e)
		fs.StringVar(&e.stdinArg, "stdin", "", "the program's standard input: `TEXT`, @FILE to read it from a file, or - for this process's stdin (default: none)")
		storeFlags(fs, e, true)
		retentionFlags(fs, e)
	},
	complete: completeSkillIDs,
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) < 2 {
			return e.fail(exitUsage, "script takes a skill id and a program, e.g. skillbox script pdf extract.py report.pdf")
		}
		stopTracing, err := e.startTracing(ctx)
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		defer stopTracing()
		h, failed := e.openStore(ctx, true)
		if failed != exitOK {
			return failed
		}
		defer h.Close() // after the runtime's Close: its last runs are recorded
		rt, err := e.runtime(ctx)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		var stdin []byte
		if e.stdinArg != "" {
			if e.stdinArg == "-" || strings.HasPrefix(e.stdinArg, "@") {
				stdin, err = readArgs(e.stdinArg, e.stdin, rt.MaxArgsBytes())
			} else {
				stdin = []byte(e.stdinArg)
			}
			if err != nil {
				return e.fail(exitUsage, "--stdin: %v", err)
			}
		}
		asker, err := e.asker()
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		res, runErr := rt.Run(ctx, run.Request{Skill: pos[0], Script: pos[1], Argv: pos[2:], Stdin: stdin, Face: run.FaceCLI, Who: operator(), Asker: asker})
		if runErr != nil {
			if e.json { // one shape for a run that did not happen, as the HTTP API's errors
				_ = writeJSON(e.stdout, map[string]any{"error": res.Error})
			} else if msg, ok := lookupFailure(runErr); ok {
				fmt.Fprintf(e.stderr, "skillbox: %s\n", clean(msg))
			} else {
				fmt.Fprintf(e.stderr, "skillbox: script failed: %s: %s\n", res.Error.Kind, clean(res.Error.Message))
			}
			return exitFailed
		}
		var out run.ProgramOutput
		if err := json.Unmarshal(res.Result, &out); err != nil {
			return e.fail(exitFailed, "the program's result: %v", err)
		}
		code := min(max(out.ExitCode, 0), maxProgramExit) // the program's, as without --json
		if e.json {
			if err := writeJSON(e.stdout, out); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			return code
		}
		// The program's own output, as it wrote it (a pipe gets its bytes); the run's logs and
		// what was cut go to stderr after it.
		_, _ = e.stdout.Write([]byte(out.Stdout))
		_, _ = e.stderr.Write([]byte(out.Stderr))
		for _, l := range res.Logs {
			fmt.Fprintf(e.stderr, "[%s %s] %s\n", l.Source, l.Level, clean(l.Message))
		}
		if out.StdoutDropped+out.StderrDropped > 0 {
			fmt.Fprintf(e.stderr, "[skillbox: %d bytes of stdout and %d of stderr cut: over maxOutputBytes]\n", out.StdoutDropped, out.StderrDropped)
		}
		return code
	},
}
