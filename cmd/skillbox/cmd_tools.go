package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
)

var cmdTools = &command{
	summary: "print the tool definitions a model is given, in OpenAI's, Anthropic's or MCP's exact shape",
	usage:   "[--format openai|anthropic|mcp] [--tools all|skills|disclosure] [--tool-names skillbox|devai]",
	long: `Print the tool definitions a model is given, as JSON ready to paste into that vendor's API:
one tool per executable skill, then the progressive-disclosure tools (list_skills, load_skill,
read_skill_resource, run_skill, run_skill_script) through which a model reaches instruction skills.
It is what GET /v1/tools returns and what an MCP client's tools/list gets. A skill's tool that the
vendor would refuse is left out, and why is said on stderr (skillbox validate lists every rule).`,
	example: `  skillbox tools --format anthropic > tools.json
  skillbox tools --format mcp --tools skills`,
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVar(&e.format, "format", "openai", "the vendor's shape: `openai`, anthropic or mcp")
		toolsFlag(fs, e)
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 0 {
			return e.fail(exitUsage, "tools takes no arguments; pick the shape with --format")
		}
		f, err := toolset.ParseFormat(e.format)
		if err != nil {
			return e.fail(exitUsage, "--%v", err)
		}
		rt, err := e.runtime(ctx)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		l := e.offer.List(e.toolNames.Over(rt), f)
		for _, b := range l.LeftOut {
			fmt.Fprintf(e.stderr, "skillbox: warning: %s\n", clean(b.String()))
		}
		out := l.Tools
		if f == tooldef.FormatMCP {
			out = map[string]any{"tools": l.Tools} // tools/list's result
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		return exitOK
	},
}
