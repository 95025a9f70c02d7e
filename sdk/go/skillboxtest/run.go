package skillboxtest

import (
	"encoding/json"
	"errors"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
	"github.com/skillbox-dev/skillbox/sdk/go/internal/hostcall"
)

// Result is the SkillResult envelope a handler's run produced, as the host reads it.
type Result struct {
	Success bool            `json:"success"`
	Result  json.RawMessage `json:"result,omitempty"` // the handler's result as JSON, on success
	Error   string          `json:"error,omitempty"`  // the handler's error text, on failure
}

// Decode decodes the result into v. It fails with the skill's error when the run did
// not succeed, so a test can write `if err := res.Decode(&out); err != nil { t.Fatal(err) }`.
func (r Result) Decode(v any) error {
	if !r.Success {
		return errors.New("skill failed: " + r.Error)
	}
	return json.Unmarshal(r.Result, v)
}

// Run calls handler on h as skill.Run does in a real run: args travel as JSON (encoded
// with encoding/json; a []byte or json.RawMessage is taken as the JSON itself, nil as {}),
// a returned error or a panic becomes success:false, and the result is encoded as JSON
// and decoded back. What the test sees is what the host would have read.
//
// Each Run is a new run: its quotas (fetches, bytes and files written, log budget) start
// from zero, while the files, logs, requests and refusals of earlier runs are kept, like a
// workspace that outlives its runs.
//
// Run panics when args do not encode as JSON: that is a mistake in the test.
func Run[A, R any](h *Host, handler func(ctx *skill.Context, args A) (R, error), args any) Result {
	var input []byte
	switch a := args.(type) {
	case nil:
	case []byte:
		input = a
	case json.RawMessage:
		input = a
	default:
		b, err := json.Marshal(args)
		if err != nil {
			panic("skillboxtest.Run: encode args: " + err.Error())
		}
		input = b
	}
	h.newRun()
	out := hostcall.Handle(h.Context(), input, handler)
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		panic("skillboxtest.Run: the SDK wrote an envelope that does not decode: " + err.Error())
	}
	return res
}

// newRun gives the next run fresh quotas.
func (h *Host) newRun() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fetches, h.written, h.writes, h.logBytes = 0, 0, 0, 0
}
