package toolset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// Runner is a [catalog.Catalog[*runtime.Skill]] that can also look a skill up and run it.
// *runtime.Runtime satisfies it; a filtered view (the skills of one tenant) can too, and then every
// tool call, the progressive-disclosure ones included, sees only that view.
type Runner interface {
	catalog.Catalog[*runtime.Skill]
	// Skill returns the skill with id, or an error matching run.ErrNotFound.
	Skill(id string) (*runtime.Skill, error)
	// Run makes the run req asks for; the Result is never nil.
	Run(ctx context.Context, req run.Request) (*run.Result, error)
}

var _ Runner = (*runtime.Runtime)(nil)

// ErrUnknownTool is matched by every [*UnknownToolError].
var ErrUnknownTool = errors.New("unknown tool")

// UnknownToolError is a tool call whose name is neither one of the [Tools]'s tools nor
// skill_<id> of a skill of the catalog: usually a name the model made up. Its message names the
// tool and lists valid ones briefly, so it can go back to the model as it is.
type UnknownToolError struct {
	Name string
	// Valid are the tools that exist: the toolset's, then every skill's, by id.
	Valid []string
	// Suggestion is the tool Name most likely meant ("skill_word_count" for "word-count" or
	// "skill_word-count"), when there is one.
	Suggestion string
}

// maxListedTools bounds the tools an UnknownToolError's message names: a catalog of a thousand
// skills would otherwise make the message a second tool list.
const maxListedTools = 8

func (e *UnknownToolError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown tool %q", e.Name)
	if e.Suggestion != "" {
		fmt.Fprintf(&b, " (did you mean %s?)", e.Suggestion)
	}
	b.WriteString("; the tools are ")
	shown := e.Valid[:min(len(e.Valid), maxListedTools)]
	b.WriteString(strings.Join(shown, ", "))
	if more := len(e.Valid) - len(shown); more > 0 {
		fmt.Fprintf(&b, " and %d more (list_skills lists every skill)", more)
	}
	return b.String()
}

// Is matches [ErrUnknownTool], and run.ErrNotFound: a caller that already branches on "not
// found" for skills needs no second case for tools.
func (e *UnknownToolError) Is(target error) bool {
	return target == ErrUnknownTool || target == run.ErrNotFound
}

// Call makes one tool call a model asked for and returns its Result:
//
//   - skill_<id> ([tooldef.Name]) runs the skill (r.Run), arguments as they are;
//   - list_skills, load_skill, read_skill_resource and run_skill are the [Tools]'s tools.
//
// The Result is never nil. For a toolset tool other than run_skill no module runs: its RunID is
// empty, Skill is the skill concerned (empty for list_skills) and Result is the tool's value as
// JSON ([SkillList], [LoadedSkill], [Resource]). The error is nil when the call succeeded; else a
// *run.Error whose kind is in Result.Error too, or an [*UnknownToolError] (kind not_found
// in Result.Error).
//
// argsJSON is the JSON object of the call's arguments; empty or null mean {} (models send both
// for tools without parameters).
func Call(ctx context.Context, r Runner, name string, argsJSON []byte) (*run.Result, error) {
	res, _, err := invoke(ctx, r, name, argsJSON)
	return res, err
}

// invoke is [Call] that also returns, for the toolset's tools, the text a model reads (see
// [Handle]); it is empty for runs, whose text is their result.
func invoke(ctx context.Context, r Runner, name string, argsJSON []byte) (*run.Result, string, error) {
	argsJSON = normaliseArgs(argsJSON)
	b := devaiTool(r, name)
	if b == nil && !(devaiNames(r) && IsAuthoring(name)) { // Devai's names replace create_skill's
		b = builtinByName(name)
	}
	if b != nil {
		start := time.Now()
		if err := ctx.Err(); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return failed("", start, &run.Error{Kind: run.KindTimeout, Message: "the caller's deadline passed", Err: err})
			}
			return failed("", start, &run.Error{Kind: run.KindCanceled, Message: "the caller canceled the call", Err: err})
		}
		return b.do(ctx, r, argsJSON, start)
	}
	if id, ok := tooldef.SkillID(name); ok {
		if s, err := r.Skill(id); err == nil {
			if !s.ModelInvocable() {
				return failed(id, time.Now(), refuseModel(s))
			}
			res, err := r.Run(ctx, request(ctx, id, argsJSON))
			return res, "", err
		}
	}
	return failed("", time.Now(), unknownTool(r, name))
}

// normaliseArgs makes empty or null arguments {}.
func normaliseArgs(args []byte) []byte {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		return []byte("{}")
	}
	return args
}

// succeeded is the Result of a toolset tool that worked: value as JSON, text for the model.
func succeeded(skill string, start time.Time, value any, text string) (*run.Result, string, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return failed(skill, start, &run.Error{Kind: run.KindInternal, Skill: skill, Message: "encode the result: " + err.Error(), Err: err})
	}
	return &run.Result{Skill: skill, Success: true, Result: raw, Logs: []run.LogEntry{}, DurationMs: since(start)}, text, nil
}

// failed is the Result of a call that failed with err, which is returned as it is.
func failed(skill string, start time.Time, err error) (*run.Result, string, error) {
	res := &run.Result{Skill: skill, Logs: []run.LogEntry{}, DurationMs: since(start)}
	var re *run.Error
	var ute *UnknownToolError
	switch {
	case errors.As(err, &re):
		res.Error = &run.ResultError{Kind: re.Kind, Message: re.Message}
	case errors.As(err, &ute):
		res.Error = &run.ResultError{Kind: run.KindNotFound, Message: ute.Error()}
	default:
		res.Error = &run.ResultError{Kind: run.KindInternal, Message: err.Error()}
	}
	return res, "", err
}

func since(start time.Time) float64 { return float64(time.Since(start).Microseconds()) / 1000 }

// unknownTool builds the error for name, with the valid tools and a guess at what was meant.
func unknownTool(r catalog.Catalog[*runtime.Skill], name string) *UnknownToolError {
	e := &UnknownToolError{Name: name, Valid: Names()}
	ids := map[string]bool{}
	for _, s := range r.Skills() {
		if s != nil && s.Kind() == spec.Executable && s.Status().Usable() && s.ModelInvocable() {
			e.Valid = append(e.Valid, tooldef.Name(s.ID()))
			ids[s.ID()] = true
		}
	}
	// The usual slips: the bare id, '-' kept, another prefix, another case.
	guess := strings.ToLower(strings.TrimSpace(name))
	for _, p := range []string{tooldef.ToolPrefix, "skill:", "skill-", "skills_", "skills."} {
		guess = strings.TrimPrefix(guess, p)
	}
	guess = strings.ReplaceAll(guess, "_", "-")
	if ids[guess] && tooldef.Name(guess) != name {
		e.Suggestion = tooldef.Name(guess)
	}
	return e
}
