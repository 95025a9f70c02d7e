package quickjs

import (
	"context"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

func runProgram(t *testing.T, src string, argv []string, stdin string, lim Limits) Result {
	t.Helper()
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{Source: src, Script: "scripts/tool.js", Argv: argv, Stdin: []byte(stdin), Limits: lim},
		newHost(t, &hostfuncs.Grant{Env: map[string]string{"A": "granted"}}))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestProgram(t *testing.T) {
	tests := []struct {
		name, src, stdin     string
		argv                 []string
		code                 int
		stdout, stderrPrefix string
	}{
		{"argv and stdout", `console.log(process.argv.slice(2).join(","), scriptArgs[0]); process.stdout.write("no newline")`, "", []string{"a", "b c"}, 0,
			"a,b c scripts/tool.js\nno newline", ""},
		{"stdin", `print(process.stdin.read().toUpperCase())`, "hi there", nil, 0, "HI THERE\n", ""},
		{"exit code", `console.error("bad"); process.exit(3); console.log("never")`, "", nil, 3, "", "bad\n"},
		{"exitCode", `process.exitCode = 4; console.log("done")`, "", nil, 4, "done\n", ""},
		{"uncaught", `console.log("before"); null.x`, "", nil, 1, "before\n", "TypeError: cannot read property 'x' of null"},
		{"async", `(async () => { await null; console.log("later"); process.exit(2); })()`, "", nil, 2, "later\n", ""},
		{"skillbox context", `console.log(skillbox.env("A"))`, "", nil, 0, "granted\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runProgram(t, tt.src, tt.argv, tt.stdin, Limits{})
			if res.ExitCode != tt.code || string(res.Stdout) != tt.stdout || !strings.HasPrefix(string(res.Stderr), tt.stderrPrefix) {
				t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
			}
		})
	}
}

// A program's output is capped, each stream on its own, and what is cut is counted.
func TestProgramOutputCap(t *testing.T) {
	res := runProgram(t, `for (let i = 0; i < 100; i++) { process.stdout.write("0123456789"); console.error("e"); }`, nil, "", Limits{MaxOutputBytes: 50})
	if len(res.Stdout) != 50 || res.StdoutDropped != 950 || len(res.Stderr) != 50 || res.StderrDropped != 150 {
		t.Fatalf("stdout %d (+%d), stderr %d (+%d)", len(res.Stdout), res.StdoutDropped, len(res.Stderr), res.StderrDropped)
	}
}

func TestProgramLimits(t *testing.T) {
	c := compiledFor(t, 512)
	_, err := Run(context.Background(), c, Program{Source: `let a = []; for (;;) a.push(new Array(1e5).fill(1));`, Script: "x.js"}, newHost(t, &hostfuncs.Grant{}))
	wantKind(t, err, scripterr.MemoryLimit)
}

// process.exit ends the program where it is, as an OS ends a process: no finally or catch of its
// own runs after it, in a job either. Each of them would make a host call (a fetch could be one),
// which the run counts.
func TestProgramExitStopsAtOnce(t *testing.T) {
	for name, src := range map[string]string{
		"finally":       `try { process.exit(3) } finally { skillbox.env("A") }`,
		"catch":         `try { process.exit(3) } catch (e) { skillbox.env("A") }`,
		"async finally": `(async () => { try { await null; process.exit(3) } finally { skillbox.env("A") } })()`,
	} {
		t.Run(name, func(t *testing.T) {
			res := runProgram(t, src, nil, "", Limits{})
			if res.ExitCode != 3 || res.HostCalls != 0 {
				t.Fatalf("exit %d after %d host calls, want 3 after none", res.ExitCode, res.HostCalls)
			}
		})
	}
}
