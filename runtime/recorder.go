package runtime

import (
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
