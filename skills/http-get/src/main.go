// Build from this directory:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o ../execute.wasm .

// Command http-get fetches one URL through the host and reports its status, content
// type, title and size. It shows the network grant at work: the host refuses any URL
// outside skill.json's "network" list, and the skill passes that refusal on unchanged.
package main

import (
	"errors"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

type args struct {
	URL string `json:"url"`
}

type result struct {
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Title       string `json:"title"`
	Bytes       int    `json:"bytes"`
	URL         string `json:"url"`
}

//go:wasmexport execute
func execute() int32 { return skill.Run(get) }

func main() {}

func get(ctx *skill.Context, a args) (result, error) {
	if a.URL == "" {
		return result{}, errors.New("url is required")
	}
	resp, err := ctx.Get(a.URL)
	if err != nil {
		// The SDK's error already reads well for the model: "fetch: denied: ...".
		return result{}, err
	}
	ctx.Infof("GET %s: %d, %d bytes", resp.URL, resp.Status, len(resp.Body))
	return result{
		Status:      resp.Status,
		ContentType: resp.Headers["content-type"],
		Title:       title(resp.Body),
		Bytes:       len(resp.Body),
		URL:         resp.URL,
	}, nil
}
