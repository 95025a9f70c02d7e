package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate flags each placeholder description skillbox new writes while it is left in, as a
// warning (exit 0: the skill runs), and stops once the author has replaced them.
func TestValidateFlagsPlaceholders(t *testing.T) {
	t.Parallel()
	skills := filepath.Join(t.TempDir(), "skills")
	if r := cli(t, "", "--skills", skills, "new", "greet", "--lang", "python"); r.code != exitOK {
		t.Fatal(r)
	}
	hint := " (replace it: a model reads it to choose the skill and fill in its arguments)\n"
	want := "ok      greet (executable)\n" +
		"  warning: greet/SKILL.md: description: is the placeholder skillbox new wrote" + hint +
		"  warning: greet/skill.json: description: is the placeholder skillbox new wrote" + hint +
		"  warning: greet/skill.json: parameters.name.description: is the placeholder skillbox new wrote" + hint +
		"1 skill, 0 invalid, 1 with warnings\n"
	r := cli(t, "", "validate", skills)
	if r.code != exitOK || r.stdout != want {
		t.Errorf("validate:\n%s\nwant stdout:\n%s", r, want)
	}

	// Replaced, the warnings go.
	dir := filepath.Join(skills, "greet")
	for file, text := range map[string]string{"skill.json": "Says hello to a person by name.", "SKILL.md": "Use to greet a person by name."} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, old := range []string{
			"Greets someone by name. (written by skillbox new; replace it with what the skill does, for the model that picks it.)",
			"Greets someone by name. (written by skillbox new; replace it with when and why a model should use the skill.)",
			"Who to greet. (written by skillbox new; replace it with what the argument is.)",
		} {
			repl := text
			if strings.HasPrefix(old, "Who") {
				repl = "The person's name"
			}
			data = []byte(strings.ReplaceAll(string(data), old, repl))
		}
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := cli(t, "", "validate", skills); r.code != exitOK || r.stdout != "ok      greet (executable)\n1 skill, 0 invalid\n" {
		t.Errorf("validate after the descriptions were replaced:\n%s", r)
	}
}
