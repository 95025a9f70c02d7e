// Package runmodule is the [RUN_MODULE] text protocol, for models without tool calling: the
// model writes [RUN_MODULE] blocks in its reply, [Parse] reads them (reporting every malformed
// one), [Run] makes each call through the toolset, and [FormatResults] writes the
// [MODULE_RESULT] blocks that answer them.
package runmodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/jsonkind"
)

// The markers of the [RUN_MODULE] text protocol, for models without tool calling: the model writes
// Open, a JSON object, Close; the host answers with ResultOpen, a JSON
// object, ResultClose. They are matched exactly, case included.
const (
	Open        = "[RUN_MODULE]"
	Close       = "[/RUN_MODULE]"
	ResultOpen  = "[MODULE_RESULT]"
	ResultClose = "[/MODULE_RESULT]"
)

// Call is one well-formed [RUN_MODULE] block of a message.
type Call struct {
	// Name is the module as written: a skill id, a tool name (skill_<id>) or a toolset tool.
	Name string
	// Args is the "args" object ({} when the block has none).
	Args json.RawMessage
	// Start and End are byte offsets: text[Start:End] is the block, markers included.
	Start, End int
	// Line is the 1-based line of Start.
	Line int
}

// Problem says what is wrong with a malformed block.
type Problem string

const (
	ProblemUnterminated Problem = "unterminated"  // an opening marker without its closing one
	ProblemUnopened     Problem = "unopened"      // a closing marker without an opening one
	ProblemJSON         Problem = "bad_json"      // the block is not one JSON object
	ProblemName         Problem = "bad_name"      // "name" is missing, empty or not a string
	ProblemArgs         Problem = "bad_args"      // "args" is not an object
	ProblemField        Problem = "unknown_field" // a key other than name and args
	ProblemTooMany      Problem = "too_many"      // past MaxRunModules: well-formed, not run
)

// ErrMalformed is matched by every [*Error].
var ErrMalformed = errors.New("malformed [RUN_MODULE] block")

// Error is a block that could not be read: where it is and what is wrong, in words the
// model can act on. A malformed block is reported, never dropped, so a model that got one block
// wrong learns it instead of waiting for a result that never comes.
type Error struct {
	Problem Problem
	// Start and End are byte offsets: text[Start:End] is the malformed block (for an
	// unterminated one, up to the next opening marker or the end of the text).
	Start, End int
	// Line is the 1-based line of Start.
	Line int
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s block at line %d: %s", Open, e.Line, e.Msg)
}

// Is matches [ErrMalformed].
func (e *Error) Is(target error) bool { return target == ErrMalformed }

// Parse finds every [RUN_MODULE] block of text, in order. A block holds one JSON object
// {"name": "...", "args": {...}} ("arguments" is accepted for "args"), optionally inside a
// Markdown code fence. Every opening marker is accounted for: it starts a call or an error,
// unless it is inside a JSON string of a well-formed block. A closing marker with no block open
// is an error too.
//
// A block ends at the first closing marker after it. When another opening marker comes first,
// the block is taken whole if it is valid JSON that way (the marker was inside a string), and
// is otherwise unterminated: the next block starts at that marker, so one missing closing marker
// loses one block, not the rest of the message.
//
// The work is linear in the length of text, whatever it holds.
func Parse(text string) ([]Call, []Error) {
	var (
		calls  []Call
		errs   []Error
		opens  = indexAll(text, Open)
		closes = indexAll(text, Close)
		lines  = lineCounter{text: text, line: 1}
		oi, ci int // the first opening and closing markers not yet passed
		pos    int
	)
	fail := func(p Problem, start, end int, format string, args ...any) {
		errs = append(errs, Error{Problem: p, Start: start, End: end, Line: lines.at(start), Msg: fmt.Sprintf(format, args...)})
	}
	for {
		for oi < len(opens) && opens[oi] < pos {
			oi++
		}
		for ci < len(closes) && closes[ci] < pos {
			ci++
		}
		if ci < len(closes) && (oi == len(opens) || closes[ci] < opens[oi]) {
			c := closes[ci]
			fail(ProblemUnopened, c, c+len(Close), "%s without %s before it; write %s, the JSON object, then %s",
				Close, Open, Open, Close)
			pos = c + len(Close)
			continue
		}
		if oi == len(opens) {
			break
		}
		start := opens[oi]
		bodyStart := start + len(Open)
		next := -1 // the next opening marker
		if oi+1 < len(opens) {
			next = opens[oi+1]
		}
		if ci == len(closes) || (next >= 0 && next < closes[ci]) {
			end := len(text)
			if next >= 0 {
				if ci < len(closes) {
					// The marker may be inside a string of this block's JSON.
					if call, perr := decodeBlock(text[bodyStart:closes[ci]]); perr == nil {
						call.Start, call.End, call.Line = start, closes[ci]+len(Close), lines.at(start)
						calls = append(calls, call)
						pos = call.End
						continue
					}
				}
				end = next
			}
			fail(ProblemUnterminated, start, end, "%s is never closed; end the block with %s", Open, Close)
			pos = end
			if next < 0 {
				break
			}
			continue
		}
		end := closes[ci] + len(Close)
		if call, perr := decodeBlock(text[bodyStart:closes[ci]]); perr != nil {
			fail(perr.Problem, start, end, "%s", perr.Msg)
		} else {
			call.Start, call.End, call.Line = start, end, lines.at(start)
			calls = append(calls, call)
		}
		pos = end
	}
	return calls, errs
}

// blockShape is what a well-formed block holds, for messages.
const blockShape = `{"name": "<skill id>", "args": {...}}`

// decodeBlock reads the JSON between the markers.
func decodeBlock(body string) (Call, *Error) {
	bad := func(p Problem, format string, args ...any) (Call, *Error) {
		return Call{}, &Error{Problem: p, Msg: fmt.Sprintf(format, args...)}
	}
	body = unfence(strings.TrimSpace(body))
	if body == "" {
		return bad(ProblemJSON, "the block is empty; write %s", blockShape)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return bad(ProblemJSON, "the block must hold a JSON object, not %s; write %s", jsonkind.Of(json.RawMessage(body)), blockShape)
		}
		return bad(ProblemJSON, "not valid JSON (%v); write %s", err, blockShape)
	}
	if m == nil {
		return bad(ProblemJSON, "the block must hold a JSON object, not null; write %s", blockShape)
	}
	var unknown []string
	for k := range m {
		if k != "name" && k != "args" && k != "arguments" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return bad(ProblemField, "unknown field %q: the block holds only \"name\" and \"args\" (put the skill's arguments inside \"args\")", unknown[0])
	}
	var name string
	raw, ok := m["name"]
	if !ok {
		return bad(ProblemName, `no "name"; write %s`, blockShape)
	}
	if err := json.Unmarshal(raw, &name); err != nil {
		return bad(ProblemName, `"name" must be a string, not %s`, jsonkind.Of(raw))
	}
	if name = strings.TrimSpace(name); name == "" {
		return bad(ProblemName, `"name" is empty; give a skill id`)
	}
	args, hasArgs := m["args"]
	if alt, has := m["arguments"]; has {
		if hasArgs {
			return bad(ProblemArgs, `both "args" and "arguments"; keep "args"`)
		}
		args, hasArgs = alt, true
	}
	switch {
	case !hasArgs || string(bytes.TrimSpace(args)) == "null":
		args = json.RawMessage("{}")
	case jsonkind.Of(args) != "an object":
		return bad(ProblemArgs, `"args" must be a JSON object, not %s`, jsonkind.Of(args))
	}
	return Call{Name: name, Args: args}, nil
}

// unfence drops a Markdown code fence around s ("```json\n...\n```"): models add them out of habit.
func unfence(s string) string {
	if !strings.HasPrefix(s, "```") {
		return s
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return s
	}
	inner := strings.TrimSpace(s[nl+1:])
	return strings.TrimSpace(strings.TrimSuffix(inner, "```"))
}

// indexAll returns the offset of every occurrence of marker in s.
func indexAll(s, marker string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(s[i:], marker)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + len(marker)
	}
}

// lineCounter numbers lines of text for offsets given in increasing order, in linear time.
type lineCounter struct {
	text string
	off  int
	line int
}

func (l *lineCounter) at(off int) int {
	if off < l.off { // not expected; count from the start again
		l.off, l.line = 0, 1
	}
	l.line += strings.Count(l.text[l.off:off], "\n")
	l.off = off
	return l.line
}
