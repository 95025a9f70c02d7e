package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/skillbox-dev/skillbox/mcpserver"
)

var cmdMCP = &command{
	summary: "serve the skills to an MCP client over stdio: tools, SKILL.md resources, prompts",
	usage:   "[--watch] [--tools all|skills|disclosure]",
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.BoolVar(&e.watch, "watch", false, "reload skills when their files change, and tell the client")
		admissionFlags(fs, e)
		toolsFlag(fs, e)
		storeFlags(fs, e, true)
		retentionFlags(fs, e)
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 0 {
			return e.fail(exitUsage, "mcp takes no arguments")
		}
		// stdout is the protocol's: nothing else may write to it, so failures go to stderr only.
		e.json = false
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		e.serving = true
		stopTracing, err := e.startTracing(ctx)
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		defer stopTracing() // after Close: the last runs' spans are sent before the process exits
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
		limitGoHeap(rt)
		level := slog.LevelWarn
		if e.verbose {
			level = slog.LevelDebug
		}
		logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
		srv := mcpserver.New(rt, mcpserver.Options{Logger: logger, Version: buildVersion, Offer: e.offer, ToolNames: e.toolNames})
		defer srv.Close()
		if e.watch {
			go rt.Watch(ctx, 0)
		}
		if e.verbose {
			fmt.Fprintf(e.stderr, "skillbox: serving %d skills over MCP on stdio\n", len(rt.Skills()))
		}
		err = srv.RunStdio(ctx, e.stdin, e.stdout)
		switch {
		case err == nil, errors.Is(err, io.EOF), ctx.Err() != nil:
			return exitOK
		}
		return e.fail(exitFailed, "mcp: %v", err)
	},
}
