package toolset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/jsonkind"
	"github.com/skillbox-dev/skillbox/run"
)

// toolArgs reads the arguments of a toolset tool. It is as strict as a skill's own schema (an
// unknown argument is an error, not ignored) and says what is wrong in the runtime's words
// (`argument "name": is required`), so a model fixes every tool call the same way.
type toolArgs struct {
	m        map[string]json.RawMessage
	problems []string
}

// aliases are other names the toolset's arguments are called by, in toolsets whose tools
// Skillbox's have the shape of (pydantic-ai-skills' read_skill_resource(skill_name,
// resource_name) and run_skill_script(skill_name, script_name, args)), so that code and prompts
// written for those work unchanged. An alias is taken by a tool that has its argument; the
// schema shown to models names Skillbox's alone.
var aliases = map[string]string{"skill_name": "skill", "resource_name": "resource", "script_name": "script"}

func parseToolArgs(raw []byte, known ...string) (*toolArgs, *run.Error) {
	a := &toolArgs{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&a.m); err != nil || a.m == nil {
		return nil, invalidArgs("arguments must be a JSON object: %s", jsonProblem(raw, err))
	}
	if dec.More() {
		return nil, invalidArgs("arguments must be one JSON object, with nothing after it")
	}
	var unknown []string
	for k := range a.m {
		if to, ok := aliases[k]; ok && slices.Contains(known, to) {
			if _, both := a.m[to]; both {
				a.problems = append(a.problems, fmt.Sprintf("arguments %q and %q: are one argument; give %q alone", to, k, to))
			}
			continue
		}
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	for k, to := range aliases {
		if v, ok := a.m[k]; ok && slices.Contains(known, to) {
			if _, both := a.m[to]; !both {
				a.m[to] = v
			}
			delete(a.m, k)
		}
	}
	sort.Strings(a.problems) // the names given twice, in one order whatever the map's
	sort.Strings(unknown)
	for _, k := range unknown {
		a.problems = append(a.problems, fmt.Sprintf("argument %q: is not an argument of this tool (its arguments: %s)", k, strings.Join(known, ", ")))
	}
	return a, nil
}

// str reads a string argument; a required one must be present and not blank.
func (a *toolArgs) str(name string, required bool) string {
	raw, ok := a.m[name]
	if !ok || string(raw) == "null" {
		if required {
			a.problems = append(a.problems, fmt.Sprintf("argument %q: is required", name))
		}
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		a.problems = append(a.problems, fmt.Sprintf("argument %q: must be a string, not %s", name, jsonkind.Of(raw)))
		return ""
	}
	if required && strings.TrimSpace(s) == "" {
		a.problems = append(a.problems, fmt.Sprintf("argument %q: is empty", name))
	}
	return s
}

// integer reads an optional integer argument within [lo, hi]; def when absent or null.
func (a *toolArgs) integer(name string, def, lo, hi int) int {
	raw, ok := a.m[name]
	if !ok || string(raw) == "null" {
		return def
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		var f float64
		if json.Unmarshal(raw, &f) == nil {
			a.problems = append(a.problems, fmt.Sprintf("argument %q: must be a whole number, not %s", name, raw))
		} else {
			a.problems = append(a.problems, fmt.Sprintf("argument %q: must be an integer, not %s", name, jsonkind.Of(raw)))
		}
		return def
	}
	if n < lo || n > hi {
		a.problems = append(a.problems, fmt.Sprintf("argument %q: must be from %d to %d, not %d", name, lo, hi, n))
		return def
	}
	return n
}

// object reads an object argument, {} when absent or null.
func (a *toolArgs) object(name string) json.RawMessage {
	raw, ok := a.m[name]
	if !ok || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	if jsonkind.Of(raw) != "an object" {
		a.problems = append(a.problems, fmt.Sprintf("argument %q: must be a JSON object, not %s", name, jsonkind.Of(raw)))
		return nil
	}
	return raw
}

// strings reads an optional array of strings, nil when absent or null.
func (a *toolArgs) strings(name string) []string {
	raw, ok := a.m[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		a.problems = append(a.problems, fmt.Sprintf(`argument %q: must be an array of strings, such as ["--pages", "1-3", "report.pdf"], not %s`, name, jsonkind.Of(raw)))
		return nil
	}
	return out
}

// err returns every problem found, in one invalid_args error.
func (a *toolArgs) err() *run.Error {
	if len(a.problems) == 0 {
		return nil
	}
	return invalidArgs("%s", strings.Join(a.problems, "; "))
}

func invalidArgs(format string, args ...any) *run.Error {
	return &run.Error{Kind: run.KindInvalidArgs, Message: fmt.Sprintf(format, args...)}
}

// jsonProblem describes why raw is not a JSON object.
func jsonProblem(raw []byte, err error) string {
	if err == nil {
		return "got null"
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return "got " + jsonkind.Of(raw)
	}
	return err.Error()
}
