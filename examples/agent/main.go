// Command agent wires Skillbox into an OpenAI-style tool-calling loop: a system prompt listing the
// skills (prompt.System), every executable skill as a tool (tooldef.OpenAI) plus the
// progressive-disclosure toolset (list_skills, load_skill, read_skill_resource, run_skill), and
// one function that answers every tool call (toolset.Handle).
//
// Offline, a scripted model plays the assistant, so the example runs anywhere:
//
//	go run ./examples/agent
//
// With an OpenAI-compatible endpoint and a key in the environment, a real model does:
//
//	OPENAI_API_KEY=... go run ./examples/agent --endpoint https://api.openai.com/v1 \
//	    --model gpt-4o-mini --prompt 'How many words are in "to be or not to be"?'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/skillbox-dev/skillbox/agent/prompt"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
)

// defaultPrompt is what the user asks when --prompt is not given; the scripted model counts
// the words after its colon.
const defaultPrompt = "How many words are in this sentence: the quick brown fox jumps over the lazy dog the end"

func main() {
	// Compile untrusted modules in a child process of this program (see the function's doc).
	runtime.MaybeCompileChild()
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// run is main without the process: arguments in, exit code out, so the test runs it as is.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	skills := fs.String("skills", "skills", "the skills directory")
	policyFile := fs.String("policy", "", "the policy file (none: deny all)")
	cacheDir := fs.String("cache-dir", "", "the compilation cache (default: the user cache directory)")
	endpoint := fs.String("endpoint", "", "an OpenAI-compatible API, such as https://api.openai.com/v1 (default: the scripted model, offline)")
	model := fs.String("model", "gpt-4o-mini", "the model, with --endpoint")
	keyEnv := fs.String("api-key-env", "OPENAI_API_KEY", "the environment variable that holds the API key, with --endpoint")
	prompt := fs.String("prompt", defaultPrompt, "what the user asks")
	maxTurns := fs.Int("max-turns", 8, "the most model turns before giving up")
	if err := fs.Parse(args); err != nil {
		return 2
	}

	var m Model = Scripted(WordCountScript)
	if *endpoint != "" {
		key := getenv(*keyEnv)
		if key == "" {
			fmt.Fprintf(stderr, "agent: --endpoint needs an API key in $%s\n", *keyEnv)
			return 2
		}
		m = &OpenAIClient{Endpoint: *endpoint, APIKey: key, Model: *model}
	}

	var pol *policy.Policy
	if *policyFile != "" {
		p, err := policy.Load(*policyFile)
		if err != nil {
			fmt.Fprintln(stderr, "agent:", err)
			return 2
		}
		pol = p
	}
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: *cacheDir})
	if err != nil {
		fmt.Fprintln(stderr, "agent:", err)
		return 1
	}
	defer sh.Close(ctx)
	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{*skills}, Policy: pol, Shared: sh})
	if err != nil {
		fmt.Fprintln(stderr, "agent:", err)
		return 1
	}
	defer rt.Close(ctx)

	if _, err := Converse(ctx, rt, m, *prompt, *maxTurns, stdout); err != nil {
		fmt.Fprintln(stderr, "agent:", err)
		return 1
	}
	return 0
}

// Converse is the loop of a tool-calling agent: send the conversation and the tools, make every
// tool call of the reply and append its result, until the model answers without calling a tool.
// Each step is written to transcript. It returns the answer.
func Converse(ctx context.Context, rt *runtime.Runtime, m Model, ask string, maxTurns int, transcript io.Writer) (string, error) {
	system := prompt.System(rt)
	msgs := []Message{{Role: "system", Content: system}, {Role: "user", Content: ask}}
	// The skills as tools of their own, and the toolset to list, load, read and run them by id.
	tools := append(tooldef.OpenAI(rt), tooldef.OpenAIToolset(toolset.Tools(rt))...)
	fmt.Fprintf(transcript, "system: %d bytes, %d tools\n", len(system), len(tools))
	fmt.Fprintf(transcript, "user: %s\n", ask)

	for turn := 0; turn < maxTurns; turn++ {
		reply, err := m.Complete(ctx, msgs, tools)
		if err != nil {
			return "", fmt.Errorf("turn %d: %w", turn+1, err)
		}
		reply.Role = "assistant"
		msgs = append(msgs, reply)
		if len(reply.ToolCalls) == 0 {
			fmt.Fprintf(transcript, "assistant: %s\n", reply.Content)
			return reply.Content, nil
		}
		for _, call := range reply.ToolCalls {
			fmt.Fprintf(transcript, "assistant calls %s %s\n", call.Function.Name, call.Function.Arguments)
			// The text goes back to the model whether the call worked or not: a failed call is
			// "error: <kind>: <message>", which tells the model what to fix. err is for us.
			out, err := toolset.Handle(ctx, rt, call.Function.Name, []byte(call.Function.Arguments))
			status := "ok"
			if err != nil {
				status = "failed"
			}
			fmt.Fprintf(transcript, "tool %s %s: %s\n", call.Function.Name, status, shorten(out, 200))
			msgs = append(msgs, Message{Role: "tool", ToolCallID: call.ID, Content: out})
		}
	}
	return "", errors.New("no answer within --max-turns")
}

// shorten cuts s to n bytes (at a rune boundary) for the transcript.
func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("... (%d bytes)", len(s))
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
