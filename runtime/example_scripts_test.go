package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// A script skill is execute.js (or .ts, .py) beside its skill.json: it runs in a sandboxed
// interpreter, its arguments checked against the manifest's parameters first.
func ExampleRuntime_Run_javascript() {
	ctx := context.Background()
	dir := exampleDir()
	defer os.RemoveAll(dir)
	writeSkill(dir, "greet", map[string]string{
		"skill.json": `{"id": "greet", "name": "Greet", "description": "Greets someone by name.",
			"parameters": {"name": {"type": "string", "required": true}}}`,
		"execute.js": `export function execute(args, ctx) {
			ctx.log("greeting " + args.name);
			return {greeting: "Hello, " + args.name + "!"};
		}`,
	})
	reader := access.Principal{Key: "notebook", Role: access.RoleRunner} // who runs: a runner at least
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: testcache.Dir()})
	check(err)
	defer sh.Close(ctx)
	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{dir}, Shared: sh, NoBackgroundCheck: true})
	check(err)
	defer rt.Close(ctx)

	res, err := rt.Run(ctx, run.Request{Who: reader, Skill: "greet", Args: []byte(`{"name":"Ada"}`)})
	check(err)
	fmt.Println(string(res.Result))
	for _, l := range res.Logs {
		fmt.Println(l.Level, l.Message)
	}

	_, err = rt.Run(ctx, run.Request{Who: reader, Skill: "greet", Args: []byte(`{}`)})
	var runErr *run.Error
	if errors.As(err, &runErr) {
		fmt.Println(runErr.Kind, runErr.Message)
	}
	// Output:
	// {"greeting":"Hello, Ada!"}
	// info greeting Ada
	// invalid_args arguments: missing property 'name'
}

// A program is a file in a skill's scripts/ directory, any skill's (here an instruction skill's,
// a SKILL.md only): it runs in the sandbox with a command line and standard input, and may do
// what scripts/skillbox.json asks for and the policy grants (here one environment variable).
// A program that exits non-zero is a run that succeeded, with that exit code.
func ExampleRuntime_Run_program() {
	ctx := context.Background()
	dir := exampleDir()
	defer os.RemoveAll(dir)
	writeSkill(dir, "counter", map[string]string{
		"SKILL.md": "---\nname: counter\ndescription: Counts the words of a text.\n---\n" +
			"Run scripts/count.js NAME with the text on its standard input.\n",
		"scripts/count.js": `const words = process.stdin.read().split(/\s+/).filter(Boolean).length;
			if (words === 0) { console.error("no words"); process.exit(1); }
			console.log(process.argv[2] + ": " + words + " " + skillbox.env("UNIT"));`,
		"scripts/skillbox.json": `{"permissions": {"env": ["UNIT"]}}`,
	})
	reader := access.Principal{Key: "notebook", Role: access.RoleRunner} // who runs: a runner at least
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: testcache.Dir()})
	check(err)
	defer sh.Close(ctx)
	rt, err := runtime.New(ctx, runtime.Config{
		SkillDirs:         []string{dir},
		Policy:            &policy.Policy{Env: map[string]string{"UNIT": "words"}},
		Shared:            sh,
		NoBackgroundCheck: true,
	})
	check(err)
	defer rt.Close(ctx)

	for _, text := range []string{"to be or not to be", ""} {
		res, err := rt.Run(ctx, run.Request{Who: reader, Skill: "counter", Script: "count.js", Argv: []string{"hamlet.txt"}, Stdin: []byte(text)})
		check(err)
		var out run.ProgramOutput
		check(json.Unmarshal(res.Result, &out))
		fmt.Printf("exit %d, stdout %q, stderr %q\n", out.ExitCode, out.Stdout, out.Stderr)
	}
	// Output:
	// exit 0, stdout "hamlet.txt: 6 words\n", stderr ""
	// exit 1, stdout "", stderr "no words\n"
}
