package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // the run failed, a skill is invalid, a skill was not found
	exitUsage  = 2 // the command line is wrong
)

// env is what a command runs with: its streams and the global options.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	skills         multiFlag
	policy         string
	json           bool
	verbose        bool
	cacheDir       string
	engine         string // --engine

	claude bool // --claude-skills

	args string // run --args
	lang string // new --lang
	sdk  string // new --sdk

	addr     string // serve
	keys     string
	insecure bool
	watch    bool

	// serving: serve and mcp, which live long enough for the runtime to check every skill in the
	// background; the other commands exit once done, and leave unused skills unchecked.
	serving bool

	maxRuns, maxQueue int // serve, mcp: admission
	warmInstances     int
	memoryBudget      byteSize
	compileMemory     byteSize
	compileTimeout    time.Duration
	cors              multiFlag     // --cors-origin
	offer             toolset.Offer // serve, mcp: --tools
	stdinArg          string        // script: --stdin

	// tracer receives the runs' spans (run, serve, mcp; see traces.go); nil traces nothing.
	tracer trace.TracerProvider
}

type command struct {
	summary string
	usage   string
	flags   func(fs *flag.FlagSet, e *env) // command-specific flags, stored in e
	run     func(ctx context.Context, e *env, args []string) int
}

var commands map[string]*command

func init() {
	commands = map[string]*command{
		"run":      cmdRun,
		"list":     cmdList,
		"show":     cmdShow,
		"validate": cmdValidate,
		"version":  cmdVersion,
		"new":      cmdNew,
		"build":    cmdBuild,
		"serve":    cmdServe,
		"mcp":      cmdMCP,
		"script":   cmdScript,
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "skillbox: run untrusted skills for AI agents in WebAssembly sandboxes")
	fmt.Fprintln(w, "\nUsage: skillbox <command> [flags] [args]")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nGlobal flags (before or after the command):")
	fmt.Fprintln(w, "  --skills DIR    a skills directory; repeat for more, the first wins a clash (default ./skills)")
	fmt.Fprintln(w, "  --policy FILE   the operator policy (YAML); without it nothing is granted but default limits")
	fmt.Fprintln(w, "  --json          machine-readable output")
	fmt.Fprintln(w, "  --cache-dir DIR where compiled modules are cached: yours, mode 0700 (default: in the user cache directory)")
	fmt.Fprintln(w, "  -v              log what the runtime does to stderr")
	fmt.Fprintln(w, "\nRun 'skillbox <command> -h' for a command's flags.")
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}

	global := flag.NewFlagSet("skillbox", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	e.globalFlags(global)
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "skillbox: %v\n", err)
		usage(stderr)
		return exitUsage
	}
	rest := global.Args()
	if len(rest) == 0 {
		usage(stderr)
		return exitUsage
	}
	if rest[0] == "help" {
		usage(stdout)
		return exitOK
	}
	cmd, ok := commands[rest[0]]
	if !ok {
		fmt.Fprintf(stderr, "skillbox: unknown command %q\n\n", rest[0])
		usage(stderr)
		return exitUsage
	}
	fs := flag.NewFlagSet("skillbox "+rest[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	e.globalFlags(fs)
	if cmd.flags != nil {
		cmd.flags(fs, e)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: skillbox %s %s\n\n%s\n\nFlags:\n", rest[0], cmd.usage, cmd.summary)
		fs.PrintDefaults()
	}
	positional, err := parseInterleaved(fs, rest[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	return cmd.run(ctx, e, positional)
}

func (e *env) globalFlags(fs *flag.FlagSet) {
	fs.Var(&e.skills, "skills", "a skills `DIR`ectory (repeatable; default ./skills)")
	fs.StringVar(&e.policy, "policy", e.policy, "the operator policy `FILE` (YAML)")
	fs.BoolVar(&e.json, "json", e.json, "machine-readable output")
	fs.BoolVar(&e.verbose, "v", e.verbose, "log the runtime's work to stderr")
	fs.StringVar(&e.cacheDir, "cache-dir", e.cacheDir, "compilation cache `DIR`")
	fs.StringVar(&e.engine, "engine", e.engine, "what runs modules: native (the default) or extism (Extism's go-sdk, the reference)")
	fs.BoolVar(&e.claude, "claude-skills", e.claude, "also discover skills in ./.claude/skills and ~/.claude/skills (after --skills)")
}

// parseInterleaved lets flags follow positional arguments (skillbox run hello --args '{}'), which
// the flag package alone stops at.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// flag.Parse consumes a "--" that ends the flags: everything after it is positional.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// runtime builds the Runtime the global flags describe.
func (e *env) runtime(ctx context.Context) (*runtime.Runtime, error) {
	for _, d := range e.skills {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			fmt.Fprintf(e.stderr, "skillbox: warning: skills directory %s does not exist\n", d)
		}
	}
	dirs := dirsOrDefault(e.skills)
	if e.claude {
		// Claude Code's skill folders: the project's, then the user's. Missing ones are fine.
		dirs = append(dirs, filepath.Join(".claude", "skills"))
		if home, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, filepath.Join(home, ".claude", "skills"))
		}
	}
	return e.runtimeFor(ctx, dirs)
}

// runtimeFor builds a Runtime over dirs with the global flags' policy and cache.
func (e *env) runtimeFor(ctx context.Context, dirs []string) (*runtime.Runtime, error) {
	cfg := runtime.Config{SkillDirs: dirs, CacheDir: e.cacheDir, Engine: runtime.Engine(e.engine), WarmInstances: e.warmInstances,
		NoBackgroundCheck: !e.serving, TracerProvider: e.tracer}
	if e.verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// The runtime reads the policy file itself, so a reload (SIGHUP, POST /v1/reload) rereads it.
	cfg.PolicyFile = e.policy
	cfg.Admission = runtime.Admission{MaxRuns: e.maxRuns, MaxQueue: e.maxQueue, MemoryBudget: int64(e.memoryBudget),
		CompileMemory: int64(e.compileMemory), CompileTimeout: e.compileTimeout}
	return runtime.New(ctx, cfg)
}

// fail prints err for a person on stderr, on one line and cleaned (an error can quote a skill's
// file), and, with --json, exact as {"error": "..."} on stdout so a program reading stdout always
// gets JSON. It returns code.
func (e *env) fail(code int, format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(e.stderr, "skillbox: %s\n", clean(msg))
	if e.json {
		_ = writeJSON(e.stdout, map[string]string{"error": msg})
	}
	return code
}

type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}
