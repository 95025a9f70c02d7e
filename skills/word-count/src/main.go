// Build from this directory:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o ../execute.wasm .

// Command word-count counts the words, lines and characters of a text and lists its
// most frequent words: exact numbers a model cannot be trusted to produce itself.
package main

import (
	"errors"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

// args are the call's arguments. Pointers tell a missing argument from a zero one, for
// hosts that did not validate against the manifest.
type args struct {
	Text *string `json:"text"`
	Top  *int    `json:"top"`
}

//go:wasmexport execute
func execute() int32 { return skill.Run(handle) }

func main() {}

func handle(ctx *skill.Context, a args) (stats, error) {
	if a.Text == nil {
		return stats{}, errors.New("text is required")
	}
	top := 5
	if a.Top != nil {
		top = *a.Top
	}
	if top < 0 || top > 100 {
		return stats{}, errors.New("top must be between 0 and 100")
	}
	s := count(*a.Text, top)
	ctx.Debugf("counted %d words in %d characters", s.Words, s.Characters)
	return s, nil
}
