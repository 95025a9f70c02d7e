package toolset

import (
	"context"

	"github.com/skillbox-dev/skillbox/run"
)

// Handle makes a tool call like [Call] and returns the text to send back to the model as the
// call's result:
//
//   - a run: the skill's result, as JSON;
//   - list_skills: the [SkillList], as JSON;
//   - load_skill: the instructions, as Markdown, then the names of the skill's other files;
//   - read_skill_resource: the file's text;
//   - a failure: "error: <kind>: <message>", such as
//     `error: invalid_args: argument "text": is required`, which says what to fix.
//
// Unlike most Go functions, Handle returns its text also when the error is not nil: a failed
// tool call is something to tell the model, not a reason to stop the conversation. The error is
// for the caller: to log it, to count it, or to mark the result as an error where the API has a
// flag for it (Anthropic's "is_error"). It is nil exactly when the call succeeded, and is then
// what [Call] returns.
func Handle(ctx context.Context, r Runner, name string, argsJSON []byte) (string, error) {
	_, text, err := HandleResult(ctx, r, name, argsJSON)
	return text, err
}

// HandleResult is [Handle] that also returns the call's Result, as [Call] does: for a face
// that sends the model's text and keeps the record (the run id, the usage) beside it.
func HandleResult(ctx context.Context, r Runner, name string, argsJSON []byte) (*run.Result, string, error) {
	res, text, err := invoke(ctx, r, name, argsJSON)
	if text != "" && err == nil {
		return res, text, nil
	}
	return res, ResultText(res), err
}

// ResultText is the text a model reads for a Result: the result value as JSON when it succeeded
// ("null" when it has none), else "error: <kind>: <message>".
func ResultText(res *run.Result) string {
	switch {
	case res == nil:
		return "error: internal: no result"
	case res.Success && len(res.Result) == 0:
		return "null"
	case res.Success:
		return string(res.Result)
	case res.Error == nil:
		return "error: internal: the call failed without an error"
	}
	return "error: " + string(res.Error.Kind) + ": " + res.Error.Message
}
