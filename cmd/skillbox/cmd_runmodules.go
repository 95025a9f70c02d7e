package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/agent/runmodule"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/run"
)

var cmdRunModules = &command{
	summary: "answer the [RUN_MODULE] blocks of a model's message with [MODULE_RESULT] blocks",
	usage:   "[FILE | -]  (the message; default: stdin)",
	long: `Read a model's message (from FILE, or stdin), make the call of each [RUN_MODULE] block in it,
in order, and print the [MODULE_RESULT] block of each: the next user message of a conversation with
a model that has no tool calling. A block names a skill, a tool of the toolset (load_skill, ...) or
a module of a skill (modules/<name>/module.json, as Autobyteus lays skills out; skill/module when
two skills have one of that name). Exits 1 when any call failed.`,
	example: `  echo '[RUN_MODULE] {"name": "image_gen", "args": {"prompt": "a teapot"}} [/RUN_MODULE]' | skillbox run-modules`,
	flags: func(fs *pflag.FlagSet, e *env) {
		storeFlags(fs, e, true)
		retentionFlags(fs, e)
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) > 1 {
			return e.fail(exitUsage, "run-modules takes at most one file, the model's message (default: stdin)")
		}
		src := "-"
		if len(pos) == 1 && pos[0] != "-" {
			src = "@" + pos[0]
		}
		text, err := readArgs(src, e.stdin, runmodule.MaxTextBytes)
		if err != nil {
			return e.fail(exitUsage, "the message: %v", err)
		}
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
		ctx = toolset.WithOrigin(ctx, toolset.Origin{Face: run.FaceCLI, Who: operator()})
		results := runmodule.Run(ctx, rt, string(text))
		code := exitOK
		for _, r := range results {
			if r.Err != nil {
				code = exitFailed
			}
		}
		if e.json {
			if err := writeJSON(e.stdout, runmodule.AnswerOf(results)); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			return code
		}
		if len(results) == 0 {
			fmt.Fprintln(e.stderr, "skillbox: the message has no [RUN_MODULE] block")
			return exitOK
		}
		fmt.Fprintln(e.stdout, runmodule.FormatResults(results))
		return code
	},
}
