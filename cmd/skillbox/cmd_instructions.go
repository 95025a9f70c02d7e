package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/skillmd"
)

var cmdInstructions = &command{
	summary: "print a skill's SKILL.md instructions as a model reads them, with $ARGUMENTS filled in",
	usage:   "<id> [--arguments TEXT] [--raw]",
	long: `Print a skill's SKILL.md body as load_skill hands it to a model: the skill's base directory
first (where its resources and scripts are), $ARGUMENTS, $0, $1, ... replaced by --arguments (or the
arguments appended when the body does not use them). --raw prints the body as written.`,
	example: `  skillbox instructions markdown-toc
  skillbox instructions release-notes --arguments "v1.2.0 v1.3.0"`,
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVar(&e.arguments, "arguments", "", "what the user typed after the skill's name, for $ARGUMENTS")
		fs.BoolVar(&e.raw, "raw", false, "the body as written, not processed")
	},
	complete: completeSkillIDs,
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "instructions takes one skill id, e.g. skillbox instructions markdown-toc")
		}
		rt, err := e.runtime(ctx)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		sk, err := rt.Skill(pos[0])
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		doc, err := toolset.ReadInstructions(sk, 0)
		if errors.Is(err, skillmd.ErrNotFound) {
			return e.fail(exitFailed, "skill %q has no SKILL.md: it has no instructions to print (skillbox show %s describes it)", sk.ID(), sk.ID())
		}
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		body := doc.Body
		if !e.raw {
			body = skillmd.Render(doc.Body, toolset.BaseDir(sk, false), e.arguments)
		}
		if e.json {
			name := doc.Name
			if meta := sk.Instructions(); meta != nil {
				name = meta.Name // named after its directory when the SKILL.md has no name
			}
			_ = writeJSON(e.stdout, map[string]any{"id": sk.ID(), "name": name, "description": doc.Description,
				"allowed_tools": doc.AllowedTools, "content": body})
			return exitOK
		}
		fmt.Fprint(e.stdout, body)
		if len(body) > 0 && body[len(body)-1] != '\n' {
			fmt.Fprintln(e.stdout)
		}
		return exitOK
	},
}

// completeSkillIDs completes a skill id from the skills the global flags point at.
func completeSkillIDs(ctx context.Context, e *env, args []string, toComplete string) []string {
	if len(args) > 0 {
		return nil
	}
	rt, err := e.runtime(ctx)
	if err != nil {
		return nil
	}
	defer rt.Close(context.Background())
	var ids []string
	for _, s := range rt.Skills() {
		ids = append(ids, s.ID())
	}
	return ids
}
