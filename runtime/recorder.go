package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/run"
)

// recordArgs fills r's Args (when the policy keeps them) and ArgsSHA256 from the request.
func recordArgs(r *history.Record, req run.Request, keep bool) {
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

// recordEnd keeps a run's end with the recent runs and has the recorder write it, even when the
// caller has gone (ctx ended): a canceled run is history too.
func (rt *Runtime) recordEnd(ctx context.Context, rec *history.Record) {
	rt.history.add(rec)
	if rt.cfg.Recorder != nil {
		if err := rt.cfg.Recorder.FinishRun(context.WithoutCancel(ctx), storedRecord(rec, rt.policy.Load().Runs)); err != nil {
			rt.logger.Error("record the run's end", "skill", rec.Result.Skill, "run", rec.Result.RunID, "err", err)
		}
	}
}
