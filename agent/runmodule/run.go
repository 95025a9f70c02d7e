package runmodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/skillbox-dev/skillbox/agent/modules"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// MaxBlocks is the most blocks [Run] runs for one message; later blocks are answered
// with an error. A model that loops writes many blocks, and each is a run.
const MaxBlocks = 16

// MaxTextBytes is the longest message a face reads for its blocks (skillbox run-modules,
// POST /v1/run-modules): a model's reply is far shorter, and a longer one is refused, not cut.
const MaxTextBytes = 1 << 20

// Result is the answer to one block of a message, well-formed or not.
type Result struct {
	// Name is the module the block named; empty for a block too malformed to name one.
	Name string
	// Line is the 1-based line of the block in the message.
	Line int
	// Result is never nil: the run's, the toolset tool's, or a failure that says what is wrong
	// with the block.
	Result *run.Result
	// Err is nil when the call succeeded; else a [*Error] for a malformed block, an
	// [*toolset.UnknownToolError] for a name that is no module, or the error of [toolset.Call].
	Err error
}

// Run parses text ([Parse]) and makes each call, in the order the blocks appear,
// one at a time (a later block may depend on an earlier one). It returns one Result per
// block, malformed blocks included, in the same order, so the answer to a message accounts for
// everything it asked. A message without blocks gives nil.
//
// A block's name may be a skill id ("word-count"), its tool name ("skill_word_count"), one of
// the [toolset.Tools]'s tools ("load_skill"), which are how a model without tool calling loads
// instructions and reads files, or else a module of a skill the catalog shows (package modules:
// "image_gen", or "image-generation/image_gen" when two skills have one of that name).
func Run(ctx context.Context, r toolset.Runner, text string) []Result {
	calls, errs := Parse(text)
	type block struct {
		start int
		call  *Call
		err   *Error
	}
	blocks := make([]block, 0, len(calls)+len(errs))
	for i := range calls {
		blocks = append(blocks, block{start: calls[i].Start, call: &calls[i]})
	}
	for i := range errs {
		blocks = append(blocks, block{start: errs[i].Start, err: &errs[i]})
	}
	if len(blocks) == 0 {
		return nil
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].start < blocks[j].start })

	out := make([]Result, 0, len(blocks))
	ran := 0
	for _, b := range blocks {
		if b.err != nil {
			res := malformed(b.err)
			out = append(out, Result{Line: b.err.Line, Result: res, Err: b.err})
			continue
		}
		c := b.call
		if ran == MaxBlocks {
			err := &Error{Problem: ProblemTooMany, Start: c.Start, End: c.End, Line: c.Line,
				Msg: fmt.Sprintf("not run: at most %d blocks run per message; write the rest after reading these results", MaxBlocks)}
			res := malformed(err)
			out = append(out, Result{Name: c.Name, Line: c.Line, Result: res, Err: err})
			continue
		}
		ran++
		res, err := callModule(ctx, r, c.Name, c.Args)
		out = append(out, Result{Name: c.Name, Line: c.Line, Result: res, Err: err})
	}
	return out
}

// malformed is the Result of a block that is not run: it failed with err, as invalid arguments.
func malformed(err *Error) *run.Result {
	return &run.Result{Logs: []run.LogEntry{}, Error: &run.ResultError{Kind: run.KindInvalidArgs, Message: err.Error()}}
}

// callModule calls the module name: a toolset tool, a skill id or a skill's tool name.
func callModule(ctx context.Context, r toolset.Runner, name string, args json.RawMessage) (*run.Result, error) {
	if !slices.Contains(toolset.Names(), name) && spec.ValidID(name) {
		if _, err := r.Skill(name); err == nil {
			name = tooldef.Name(name)
		}
	}
	res, err := toolset.Call(ctx, r, name, args)
	if _, ok := err.(*toolset.UnknownToolError); ok {
		// No tool or skill by that name: a module of a skill (modules/<name>/module.json).
		skill, m, ferr := modules.Find(r, name)
		if ferr == nil {
			return modules.Run(ctx, r, skill, m, args)
		}
		if !errors.Is(ferr, modules.ErrNoModule) {
			return &run.Result{Logs: []run.LogEntry{}, Error: &run.ResultError{Kind: run.KindInvalidArgs, Message: ferr.Error()}}, ferr
		}
	}
	if ute, ok := err.(*toolset.UnknownToolError); ok {
		// Name the modules as the text protocol does: by id.
		ute.Valid = toolset.Names()
		for _, s := range toolset.ListSkills(r) {
			if s.Kind == spec.Executable {
				ute.Valid = append(ute.Valid, s.ID)
			}
		}
		if id, ok := tooldef.SkillID(ute.Suggestion); ok {
			ute.Suggestion = id
		}
		res.Error.Message = ute.Error()
	}
	return res, err
}

// moduleResultJSON is the JSON of a [MODULE_RESULT] block: the Result's success, result and
// error, and the name of the block it answers.
type moduleResultJSON struct {
	Name    string           `json:"name"`
	Success bool             `json:"success"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *run.ResultError `json:"error,omitempty"`
}

// FormatResult returns the answer to one block, for the model:
//
//	[MODULE_RESULT]
//	{"name":"word-count","success":true,"result":{"words":3,...}}
//	[/MODULE_RESULT]
//
// or "success":false with "error":{"kind":...,"message":...}. Any of the protocol's markers
// inside the JSON (a skill's output may contain them) has its '[' written \u005b, which is the
// same JSON but cannot be read as a marker, by the model or by [Parse].
func FormatResult(r Result) string {
	out := moduleResultJSON{Name: r.Name}
	switch res := r.Result; {
	case res == nil:
		out.Error = &run.ResultError{Kind: run.KindInternal, Message: "no result"}
	case res.Success:
		out.Success, out.Result = true, res.Result
		if len(out.Result) == 0 {
			out.Result = json.RawMessage("null")
		}
	case res.Error != nil:
		out.Error = res.Error
	default:
		out.Error = &run.ResultError{Kind: run.KindInternal, Message: "the call failed without an error"}
	}
	raw, err := json.Marshal(out)
	if err != nil { // a Result that is not valid JSON: report it rather than send it
		raw, _ = json.Marshal(moduleResultJSON{Name: r.Name, Error: &run.ResultError{Kind: run.KindInternal, Message: "the result is not valid JSON"}})
	}
	return ResultOpen + "\n" + string(escapeMarkers(raw)) + "\n" + ResultClose
}

// FormatResults is each of results formatted by [FormatResult], one after the
// other: the next user message of the conversation.
func FormatResults(results []Result) string {
	parts := make([]string, len(results))
	for i, r := range results {
		parts[i] = FormatResult(r)
	}
	return strings.Join(parts, "\n")
}

// protocolMarkers are the markers escaped in results.
var protocolMarkers = []string{Open, Close, ResultOpen, ResultClose}

// escapeMarkers writes the '[' of every protocol marker in JSON as \u005b. In valid JSON a
// marker can only be inside a string (no JSON token starts "[R", "[M" or "[/"), where the escape
// decodes to the same text.
func escapeMarkers(raw []byte) []byte {
	if bytes.IndexByte(raw, '[') < 0 {
		return raw
	}
	for _, m := range protocolMarkers {
		raw = bytes.ReplaceAll(raw, []byte(m), []byte(`\u005b`+m[1:]))
	}
	return raw
}

// Answer is a message's blocks answered, in the shape the faces send as JSON (skillbox
// run-modules --json, POST /v1/run-modules): each block's Result, and Text, the next user
// message ([FormatResults]).
type Answer struct {
	Results []AnsweredBlock `json:"results"`
	Text    string          `json:"text"`
}

// AnsweredBlock is one block's answer: the name it gave (empty for a block too malformed to
// name one), its line, and its Result.
type AnsweredBlock struct {
	Name   string      `json:"name"`
	Line   int         `json:"line"`
	Result *run.Result `json:"result"`
}

// AnswerOf is results as an [Answer].
func AnswerOf(results []Result) Answer {
	a := Answer{Results: make([]AnsweredBlock, len(results)), Text: FormatResults(results)}
	for i, r := range results {
		a.Results[i] = AnsweredBlock{Name: r.Name, Line: r.Line, Result: r.Result}
	}
	return a
}
