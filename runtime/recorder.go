package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/skillbox-dev/skillbox/run"
)

// RunRecorder keeps the history of runs beyond this process: a store implements it (see the
// store package), so the runtime links no database. Both methods are called on the run's
// goroutine and delay the run by what they take; both must be safe for concurrent use.
//
// BeginRun is told of a run once it is admitted, before its module runs (Result holds the run
// id, skill, version and digest, nothing else yet): a recorder that marks it running can later
// tell a run that finished from one whose process died. FinishRun is told of the same run when
// it ends, with its outcome; it is called for every run BeginRun was, even when BeginRun failed.
//
// A recorder's error does not fail the run: the runtime logs it (level error) and goes on, so a
// store that is down costs the history, not the service.
type RunRecorder interface {
	BeginRun(ctx context.Context, r *Record) error
	FinishRun(ctx context.Context, r *Record) error
}

// recordArgs fills r's Args (when the policy keeps them) and ArgsSHA256 from the request.
func recordArgs(r *Record, req run.Request, keep bool) {
	args := req.Args
	if req.Script != "" {
		// A program's input is its command line and standard input.
		args, _ = json.Marshal(struct {
			Argv  []string `json:"argv"`
			Stdin []byte   `json:"stdin,omitempty"`
		}{req.Argv, req.Stdin})
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	sum := sha256.Sum256(args)
	r.ArgsSHA256 = hex.EncodeToString(sum[:])
	if keep && json.Valid(args) {
		r.Args = args
	}
}
