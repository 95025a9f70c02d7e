package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/run"
)

var cmdRun = &command{
	summary: "run a skill and print its result",
	usage:   "<id> [--args JSON | --args @FILE | --args -]",
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVar(&e.args, "args", "{}", "the arguments: a `JSON` object, @FILE to read it from a file, or - for stdin")
		askFlag(fs, e)
		fs.StringVar(&e.server, "server", "", "hand the run to the skillbox serve already running at `URL` (or set "+serverEnv+"; its key in "+keyEnv+")")
		storeFlags(fs, e, true)
		retentionFlags(fs, e)
	},
	complete: completeSkillIDs,
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "run takes one skill id, e.g. skillbox run hello --args '{\"name\":\"Ada\"}'")
		}
		if server := e.handoffTarget(); server != "" {
			return e.handoff(ctx, server, pos[0])
		}
		stopTracing, err := e.startTracing(ctx)
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		defer stopTracing() // after Close: the run's span is sent before the process exits
		h, code := e.openStore(ctx, true)
		if code != exitOK {
			return code
		}
		defer h.Close() // after the runtime's Close: its last runs are recorded
		rt, err := e.runtime(ctx)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		// Read within the runtime's bound on arguments, which the policy and --max-args-bytes set.
		args, err := readArgs(e.args, e.stdin, rt.MaxArgsBytes())
		if err != nil {
			return e.fail(exitUsage, "--args: %v", err)
		}
		asker, err := e.asker()
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		res, runErr := rt.Run(ctx, run.Request{Skill: pos[0], Args: args, Face: run.FaceCLI, Who: operator(), Asker: asker})
		msg := ""
		if m, ok := lookupFailure(runErr); ok {
			msg = m
		}
		return e.printRun(res, runErr, msg)
	},
}

// printRun prints a run's outcome as run does: its logs on stderr and its result on stdout, or
// the whole result as JSON with --json. failure, when not "", is what to say of runErr instead
// of the result's error. It returns the exit code.
func (e *env) printRun(res *run.Result, runErr error, failure string) int {
	if e.json {
		if err := writeJSON(e.stdout, res); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
	} else {
		for _, l := range res.Logs {
			src := ""
			if l.Source != "" {
				src = l.Source + " "
			}
			fmt.Fprintf(e.stderr, "[%s%s] %s\n", src, l.Level, clean(l.Message))
		}
		if res.LogsDropped > 0 {
			fmt.Fprintf(e.stderr, "[%d log entries dropped: over maxLogBytes]\n", res.LogsDropped)
		}
		for _, d := range res.Usage.Denied {
			fmt.Fprintf(e.stderr, "[denied] %s\n", clean(d))
		}
		if runErr == nil {
			// The result is the skill's: valid JSON whose strings may hold raw controls and
			// bidi overrides. cleanJSON escapes them, --json above prints them exact.
			var pretty bytes.Buffer
			if json.Indent(&pretty, res.Result, "", "  ") == nil {
				fmt.Fprintln(e.stdout, cleanJSON(pretty.Bytes()))
			} else {
				fmt.Fprintln(e.stdout, cleanJSON(res.Result))
			}
		}
	}
	if runErr != nil {
		if failure != "" && !e.json {
			fmt.Fprintf(e.stderr, "skillbox: %s\n", clean(failure))
		} else if !e.json {
			fmt.Fprintf(e.stderr, "skillbox: run failed: %s: %s\n", res.Error.Kind, clean(res.Error.Message))
		}
		return exitFailed
	}
	return exitOK
}

// readArgs resolves --args: literal JSON, @file, or - for stdin.
func readArgs(v string, stdin io.Reader, max int64) ([]byte, error) {
	switch {
	case v == "-":
		return readLimited(stdin, max)
	case strings.HasPrefix(v, "@"):
		f, err := os.Open(v[1:])
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readLimited(f, max)
	}
	return []byte(v), nil
}

func readLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("more than %d bytes (the policy's runs.maxArgsBytes, or --max-args-bytes)", max)
	}
	return data, nil
}
