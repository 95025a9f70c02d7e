package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/cluster"
	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/internal/nearest"
	"github.com/skillbox-dev/skillbox/permit"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/version"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // the run failed, a skill is invalid, a skill was not found
	exitUsage  = 2 // the command line is wrong
	// exitPending: not a failure. What was asked is done (a bundle installed and recorded as a
	// version), but the version asks for more than the one before it and does not run until an
	// admin approves it (skillbox approve). A script tells it apart from success and failure.
	exitPending = 3
)

// env is what a command runs with: its streams and the global options.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	skills         []string
	policy         string
	json           bool
	verbose        bool
	cacheDir       string
	engine         string // --engine

	claude bool // --claude-skills

	args      string // run --args
	server    string // run --server
	format    string // tools --format
	arguments string // instructions --arguments
	raw       bool   // instructions --raw
	lang      string // new --lang
	sdk       string // new --sdk

	addr     string // serve
	keys     string
	insecure bool
	watch    bool
	// serve: the bounds on clients (see connectionFlags)
	bodyTimeout, shutdownTimeout time.Duration
	maxConnections               int
	// clusterMode is serve's --cluster ("" alone, "embedded", or nats:// URLs); cluster its
	// other cluster flags (see clusterFlags).
	clusterMode string
	cluster     cluster.Config

	// serving: serve and mcp, which live long enough for the runtime to check every skill in the
	// background; the other commands exit once done, and leave unused skills unchecked.
	serving bool

	maxRuns, maxQueue           int // serve, mcp: admission
	warmInstances               int
	memoryBudget                byteSize
	maxArgsBytes                byteSize
	compileMemory               byteSize
	compileTimeout              time.Duration
	cors                        []string       // --cors-origin
	noConsole                   bool           // --no-console
	offer                       toolset.Offer  // serve, mcp: --tools
	toolNames                   toolset.Naming // serve, mcp, tools: --tool-names
	indexURL, findLinks, python string         // vendor
	stdinArg                    string         // script: --stdin
	ask                         string         // run, script: --ask (prompt.go)

	dataDir, database string // where the run history is (see storeFlags)
	spoolDir          string // --spool-dir: where records wait while the store is down
	noStore           bool
	retention         store.Retention // --keep-runs, --keep-runs-for
	// tenantRetention is the retention of each tenant of serve --tenants that has its own,
	// for the recorder openStore makes.
	tenantRetention map[string]store.Retention
	// recorder, when set (by openStore), records the runs of the runtime built next; versions,
	// when set (by openStore), keeps its skill versions.
	recorder history.Recorder
	// tenantsFile is --tenants (serve's, and the version commands'); shared, once made, is the
	// runtime.Shared every runtime the command builds runs on (see sharedEngine): with tenants,
	// the default tenant's and each tenant's, so the host is bounded once.
	tenantsFile string
	shared      *runtime.Shared
	versions    version.Store
	// tenant and user are --tenant and --user: the tenant (of tenantsFile, for the version
	// commands) and the user a local command acts in (see scope.go); "" is the default tenant,
	// and the operator's own view.
	tenant, user string

	output string   // pack, unpack, sign: -o
	key    string   // sign --key
	pubs   []string // verify --pub
	note   string   // approve, reject, publish, deprecate, yank --note
	runs   runsFlags
	// queue is versions' --status and --limit: the review queue, when it names no skill.
	queue version.Query

	// command is the command running, for the hint under a usage error.
	command string

	// onReload is told what each reload changed (serve logs it).
	onReload func(runtime.Reloaded)

	// tracer receives the runs' spans (run, serve, mcp; see traces.go); nil traces nothing.
	tracer trace.TracerProvider
}

// command is one subcommand: its help, its own flags (stored in the env) and what it does. The
// command line itself is cobra's: GNU-style flags anywhere on the line, `--` ending them, a help
// per command with the global flags in their own section, `help <cmd>`, `--version`, shell
// completion, and suggestions for a mistyped command or flag.
type command struct {
	summary string
	usage   string // the positional arguments, e.g. "<id> [--args JSON]"
	// long, when set, is the help's text under the summary; example is the help's Examples.
	long, example string
	flags         func(fs *pflag.FlagSet, e *env)
	// complete, when set, completes the command's positional arguments (skill ids, ...).
	complete func(ctx context.Context, e *env, args []string, toComplete string) []string
	// completeFlags, when set, completes the values of the command's flags, by flag name.
	completeFlags map[string]flagCompletion
	run           func(ctx context.Context, e *env, args []string) int
}

// flagCompletion completes a flag's value: the candidates (the shell keeps those that start
// with what was typed), and how the shell treats them. The flags before it are parsed into e.
type flagCompletion func(ctx context.Context, e *env, toComplete string) ([]string, cobra.ShellCompDirective)

var commands map[string]*command

func init() {
	commands = map[string]*command{
		"run":          cmdRun,
		"list":         cmdList,
		"show":         cmdShow,
		"validate":     cmdValidate,
		"version":      cmdVersion,
		"new":          cmdNew,
		"build":        cmdBuild,
		"serve":        cmdServe,
		"mcp":          cmdMCP,
		"script":       cmdScript,
		"init":         cmdInit,
		"tools":        cmdTools,
		"instructions": cmdInstructions,
		"pack":         cmdPack,
		"unpack":       cmdUnpack,
		"install":      cmdInstall,
		"keygen":       cmdKeygen,
		"sign":         cmdSign,
		"verify":       cmdVerify,
		"versions":     cmdVersions,
		"runs":         cmdRuns,
		"run-modules":  cmdRunModules,
		"vendor":       cmdVendor,
	}
	for action := range versionActions { // approve, reject, publish, deprecate, yank
		commands[action] = versionCommand(action)
	}
}

// about is the root command's help text.
const about = `skillbox: run untrusted skills for AI agents in WebAssembly sandboxes

A skill is a directory with a skill.json (what it does, its parameters, the permissions and limits
it asks for) and its code, or a SKILL.md of instructions. Skills are found in ./skills unless
--skills says otherwise; nothing is granted beyond the defaults unless --policy grants it.`

// usageTemplate is cobra's, with the root's usage line written out and the global flags in a
// section of their own on every command.
const usageTemplate = `Usage:{{if and .Runnable .HasParent}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} <command> [flags] [args]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if and .HasParent .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if not .HasParent}}

Global flags (before or after the command):
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{else if .HasAvailableInheritedFlags}}

Global flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Run '{{.CommandPath}} help <command>' or '{{.CommandPath}} <command> --help' for a command's flags.{{end}}
`

// runCLI is the whole CLI, in-process: it parses args, runs the command, and returns the exit code.
func runCLI(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	code := exitOK
	root := newRoot(e, &code)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		usageError(stderr, cmd, err)
		return exitUsage
	}
	return code
}

// newRoot builds the command tree over e; a command's exit code is stored in *code.
func newRoot(e *env, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:     "skillbox",
		Short:   "run untrusted skills for AI agents in WebAssembly sandboxes",
		Long:    about,
		Version: moduleVersion(),
		// Errors are printed once, by run, short and with a hint, not followed by the whole help.
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// No command: the help, as an error (a script that forgot its command fails).
			cmd.SetOut(e.stderr)
			_ = cmd.Help()
			*code = exitUsage
			return nil
		},
	}
	// Before the completion command is made: it keeps the writer it finds then.
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetVersionTemplate("skillbox {{.Version}}\n")
	root.SetUsageTemplate(usageTemplate)
	root.Flags().Bool("version", false, "print skillbox's version")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &flagError{err: err, cmd: cmd} })
	e.globalFlags(root.PersistentFlags())
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		c := commands[name]
		cc := &cobra.Command{
			Use:     strings.TrimSpace(name + " " + c.usage),
			Short:   c.summary,
			Long:    c.long,
			Example: c.example,
			// Each command checks its own positional arguments, with a message that shows how.
			Args: cobra.ArbitraryArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				e.command = name
				defer e.closeShared()
				*code = c.run(cmd.Context(), e, args)
				return nil
			},
		}
		if c.long == "" {
			cc.Long = c.summary
		}
		if c.flags != nil {
			c.flags(cc.Flags(), e)
		}
		for flag, f := range c.completeFlags {
			err := cc.RegisterFlagCompletionFunc(flag, func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return f(cmd.Context(), e, toComplete)
			})
			if err != nil { // a completion of a flag the command lacks: a mistake in this file's tables
				panic(fmt.Sprintf("command %s: %v", name, err))
			}
		}
		if c.complete != nil {
			cc.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return c.complete(cmd.Context(), e, args, toComplete), cobra.ShellCompDirectiveNoFileComp
			}
		}
		root.AddCommand(cc)
	}
	// cobra's own commands, made now to word their summaries as ours are.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Short = "print the help of a command: skillbox help run"
		case "completion":
			c.Short = "print the shell completion script for bash, zsh, fish or powershell"
		}
	}
	return root
}

// flagError is a flag the command line got wrong, with the command it was given to.
type flagError struct {
	err error
	cmd *cobra.Command
}

func (f *flagError) Error() string { return f.err.Error() }
func (f *flagError) Unwrap() error { return f.err }

// usageError prints a command line's mistake in a few lines: the error, the nearest flag when
// one was mistyped, and where the help is. Never the whole help: it would bury the mistake.
func usageError(w io.Writer, cmd *cobra.Command, err error) {
	path := "skillbox"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	msg := err.Error()
	var fe *flagError
	if errors.As(err, &fe) {
		path = fe.cmd.CommandPath()
		if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
			if near := nearestFlag(fe.cmd, name); near != "" {
				msg += " (did you mean --" + near + "?)"
			}
		} else if _, word, ok := strings.Cut(msg, "' in -"); ok && strings.HasPrefix(msg, "unknown shorthand flag") {
			// -json: the flag package's spelling; here long flags take two dashes.
			if near := nearestFlag(fe.cmd, word); near != "" {
				msg += " (long flags take two dashes: --" + near + ")"
			}
		}
	}
	// cobra's unknown command carries its suggestions on lines of their own: keep them.
	msg = strings.TrimRight(msg, "\n")
	fmt.Fprintf(w, "%s: %s\nRun '%s --help' for usage.\n", path, msg, path)
}

// nearestFlag is the flag of cmd (its own or a global one) nearest to the mistyped name, or "".
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3 // more than two edits away is no suggestion
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := nearest.Distance(name, f.Name)
		if strings.HasPrefix(f.Name, name) {
			d = min(d, 1) // --arg for --args
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

func (e *env) globalFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&e.skills, "skills", nil, "look for skills in `DIR`; repeat for more, the first wins a clash (default ./skills)")
	fs.StringVar(&e.policy, "policy", "", "the operator policy, a YAML `FILE`; without it nothing is granted but default limits")
	fs.Var(&e.maxArgsBytes, "max-args-bytes", "the largest arguments a run takes, on every face, such as 8MiB (default: the policy's runs.maxArgsBytes, 4 MiB)")
	fs.BoolVar(&e.json, "json", false, "machine-readable output")
	fs.BoolVarP(&e.verbose, "verbose", "v", false, "log what the runtime does to stderr")
	fs.StringVar(&e.cacheDir, "cache-dir", "", "cache compiled modules in `DIR` (yours, mode 0700; default: in the user cache directory)")
	fs.StringVar(&e.engine, "engine", "", "run modules with `ENGINE`: native (the default) or extism (Extism's go-sdk, the reference)")
	fs.BoolVar(&e.claude, "claude-skills", false, "also discover skills in ./.claude/skills and ~/.claude/skills (after --skills)")
}

// runtime builds the Runtime the global flags describe.
func (e *env) runtime(ctx context.Context) (*runtime.Runtime, error) {
	for _, d := range e.skills {
		e.warnMissingDir(d, "")
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

// warnMissingDir warns on stderr that the skills directory dir (of whose, when set: " of
// tenant acme") does not exist: no skills are there, which is no error (a new tenant has none
// yet), but a mistyped path must not pass in silence.
func (e *env) warnMissingDir(dir, whose string) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintf(e.stderr, "skillbox: warning: skills directory %s%s does not exist\n", clean(dir), clean(whose))
	}
}

// runtimeFor builds a Runtime over dirs with the global flags' policy and cache.
func (e *env) runtimeFor(ctx context.Context, dirs []string, adjust ...func(*runtime.Config)) (*runtime.Runtime, error) {
	cfg := runtime.Config{SkillDirs: dirs, NoBackgroundCheck: !e.serving, TracerProvider: e.tracer, OnReload: e.onReload}
	if e.verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// The runtime reads the policy file itself, so a reload (SIGHUP, POST /v1/reload) rereads it.
	cfg.PolicyFile = e.policy
	cfg.MaxArgsBytes = int64(e.maxArgsBytes)
	cfg.Recorder = e.recorder
	cfg.Versions = e.versions
	// The store that keeps the versions keeps the permits people make too (a store.Store is
	// both), so every replica honours them.
	if p, ok := e.versions.(permit.Store); ok {
		cfg.Permits = p
	}
	// The store that keeps the runs keeps their artifacts too (a store.Recorder is both).
	if a, ok := e.recorder.(artifact.Store); ok {
		cfg.Artifacts = a
	}
	sh, err := e.sharedEngine(ctx)
	if err != nil {
		return nil, err
	}
	cfg.Shared = sh
	for _, f := range adjust {
		f(&cfg)
	}
	return runtime.New(ctx, cfg)
}

// sharedEngine is the runtime.Shared every runtime of the command runs on, made from the flags at the
// first call (serve --tenants makes it first); the command's runner closes it once the command
// returns, after the command has closed its runtimes.
func (e *env) sharedEngine(ctx context.Context) (*runtime.Shared, error) {
	if e.shared == nil {
		sh, err := runtime.NewShared(ctx, e.sharedConfig())
		if err != nil {
			return nil, err
		}
		e.shared = sh
	}
	return e.shared, nil
}

// closeShared closes the Shared the command ran on, if it made one.
func (e *env) closeShared() {
	if e.shared != nil {
		_ = e.shared.Close(context.Background())
		e.shared = nil
	}
}

// sharedConfig is what the flags say of the engine, the compilation cache and the admission.
func (e *env) sharedConfig() runtime.SharedConfig {
	sc := runtime.SharedConfig{CacheDir: e.cacheDir, Engine: runtime.Engine(e.engine), WarmInstances: e.warmInstances,
		Admission: runtime.Admission{MaxRuns: e.maxRuns, MaxQueue: e.maxQueue, MemoryBudget: int64(e.memoryBudget),
			CompileMemory: int64(e.compileMemory), CompileTimeout: e.compileTimeout}}
	if !e.serving && isTerminal(e.stderr) {
		sc.OnCompile = newProgress(e.stderr).event
	}
	return sc
}

// fail prints err for a person on stderr, on one line and cleaned (an error can quote a skill's
// file), and, with --json, exact as {"error": "..."} on stdout so a program reading stdout always
// gets JSON. It returns code.
func (e *env) fail(code int, format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(e.stderr, "skillbox: %s\n", clean(msg))
	if code == exitUsage && e.command != "" {
		fmt.Fprintf(e.stderr, "Run 'skillbox %s --help' for usage.\n", e.command)
	}
	if e.json {
		_ = writeJSON(e.stdout, map[string]string{"error": msg})
	}
	return code
}
