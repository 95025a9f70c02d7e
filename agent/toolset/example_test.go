package toolset_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/runtime"
)

// An agent's tool calls, as a model makes them: list_skills shows what exists (metadata only),
// skill_<id> runs an executable skill, and a failure is text that tells the model what to fix.
func ExampleHandle() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "skillbox-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, content := range map[string]string{ // an executable skill and an instruction skill
		"greet/skill.json": `{"id": "greet", "name": "Greet", "description": "Greets someone by name.",
			"parameters": {"name": {"type": "string", "required": true}}}`,
		"greet/execute.js":     `export const execute = (args) => ({greeting: "Hello, " + args.name + "!"});`,
		"style-guide/SKILL.md": "---\nname: style-guide\ndescription: How we write.\n---\nShort sentences.\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: testcache.Dir()})
	if err != nil {
		log.Fatal(err)
	}
	defer sh.Close(ctx)
	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{dir}, Shared: sh, NoBackgroundCheck: true})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	var names []string
	for _, tool := range toolset.Tools(rt) { // to offer the model, beside a skill_<id> tool per executable skill
		names = append(names, tool.Name)
	}
	fmt.Println(strings.Join(names, ", "))
	for _, call := range []struct{ name, args string }{
		{"list_skills", ``},
		{"skill_greet", `{"name": "Ada"}`},
		{"run_skill", `{"skill": "greet", "args": {"name": "Grace"}}`},
		{"skill_greet", `{}`},
	} {
		out, err := toolset.Handle(ctx, rt, call.name, []byte(call.args))
		fmt.Println(call.name, "failed:", err != nil) // Anthropic's is_error
		fmt.Println(out)                              // what goes back to the model
	}
	// Output:
	// list_skills, load_skill, read_skill_resource, run_skill, run_skill_script
	// list_skills failed: false
	// {"skills":[{"id":"greet","name":"Greet","description":"Greets someone by name.","kind":"executable","tags":[],"tool":"skill_greet"},{"id":"style-guide","name":"style-guide","description":"How we write.","kind":"instructions","tags":[]}],"total":2}
	// skill_greet failed: false
	// {"greeting":"Hello, Ada!"}
	// run_skill failed: false
	// {"greeting":"Hello, Grace!"}
	// skill_greet failed: true
	// error: invalid_args: arguments: missing property 'name'
}
