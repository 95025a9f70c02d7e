// Build from this directory:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o ../execute.wasm .

// Command hello is the smallest Skillbox skill: it greets a name and logs one line.
// It exists to show the shape of a skill and to smoke-test a host.
package main

import skill "github.com/skillbox-dev/skillbox/sdk/go"

// args are the call's arguments; the host has already applied the manifest's default.
type args struct {
	Name string `json:"name"`
}

type result struct {
	Greeting string `json:"greeting"`
}

//go:wasmexport execute
func execute() int32 { return skill.Run(hello) }

func main() {}

func hello(ctx *skill.Context, a args) (result, error) {
	if a.Name == "" {
		a.Name = "world" // the default, for hosts that did not apply it
	}
	ctx.Infof("greeting %s", a.Name)
	return result{Greeting: "Hello, " + a.Name + "!"}, nil
}
