// Build from this directory:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o ../execute.wasm .

// Command notes keeps named Markdown notes under /workspace/notes, one file per note.
//
// The ABI has no directory listing, so the skill maintains index.json beside the notes:
// a sorted JSON array of names, updated by write and append and read by list.
package main

import (
	"errors"
	"fmt"
	"regexp"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

// dir is the mount granted in skill.json.
const dir = "/workspace/notes"

// nameRE is the manifest's pattern, checked again here because a name becomes a path.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

type args struct {
	Action string  `json:"action"`
	Name   string  `json:"name"`
	Text   *string `json:"text"` // a pointer: missing text is an error, "" is not
}

// The results, one shape per action.
type (
	listed struct {
		Notes []string `json:"notes"`
	}
	note struct {
		Name string `json:"name"`
		Text string `json:"text"`
	}
	saved struct {
		Name  string `json:"name"`
		Bytes int    `json:"bytes"`
	}
)

//go:wasmexport execute
func execute() int32 { return skill.Run(handle) }

func main() {}

func handle(ctx *skill.Context, a args) (any, error) {
	if a.Action == "list" {
		names, err := readIndex(ctx)
		if err != nil {
			return nil, err
		}
		return listed{Notes: names}, nil
	}
	switch a.Action {
	case "read", "write", "append":
	default:
		return nil, fmt.Errorf("unknown action %q: use write, read, list or append", a.Action)
	}
	if a.Name == "" {
		return nil, fmt.Errorf("name is required for %s", a.Action)
	}
	if !nameRE.MatchString(a.Name) {
		return nil, fmt.Errorf("invalid name %q: use 1 to 64 letters, digits, '.', '_' or '-'", a.Name)
	}
	if a.Action == "read" {
		text, err := ctx.ReadFile(notePath(a.Name))
		if errors.Is(err, skill.ErrNotFound) {
			return nil, fmt.Errorf("note %q not found", a.Name)
		}
		if err != nil {
			return nil, err
		}
		return note{Name: a.Name, Text: string(text)}, nil
	}
	if a.Text == nil {
		return nil, fmt.Errorf("text is required for %s", a.Action)
	}
	n, err := save(ctx, a.Name, *a.Text, a.Action == "append")
	if err != nil {
		return nil, err
	}
	ctx.Infof("%s %s: %d bytes", a.Action, a.Name, n)
	return saved{Name: a.Name, Bytes: n}, nil
}
