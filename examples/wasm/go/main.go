// Build from this directory:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o conformance.wasm .

// Command conformance exercises every host function of skillbox/v1 once per outcome
// and reports what happened. The host's tests run it against a fixture server and a
// fixture grant and compare the result with an expected document.
//
// # Contract
//
// The same guest will be written in TinyGo, Rust, AssemblyScript and C. Given the same
// arguments and host, every one must produce the same result, compared as JSON values
// (key order is not part of the contract).
//
// Arguments (all strings except bigWrite):
//
//	fetchUrl     a granted URL; the guest reports the response's status, body and
//	             its x-echo and content-type headers ("" when absent)
//	deniedUrl    a URL whose host is not on the grant
//	missingUrl   a URL on the grant whose server refuses connections
//	envName      a granted, set environment variable
//	deniedEnv    a variable that is not granted
//	readPath     an existing file under a mount
//	missingPath  a path under a mount that does not exist
//	writePath    a path under a read-write mount
//	writeData    the text to write there
//	readOnlyPath a path under a read-only mount
//	escapePath   a path with a ".." segment
//	bigWrite     a byte count larger than the run's maxWriteBytes
//
// The operations run in this order, one result key each. An outcome is "ok", the
// status's lower-case ABI name ("not_found", "denied", "invalid", "limit", "failed"),
// or "skipped" when the argument it needs is empty (or bigWrite is not positive).
//
//	fetch          GET fetchUrl
//	               {"outcome":"ok","status":200,"body":"...","echo":"<x-echo>","contentType":"..."}
//	fetchPost      POST fetchUrl, body "ping", header X-Test: 1; the same fields as fetch
//	fetchDenied    GET deniedUrl                                   "denied"
//	fetchMissing   GET missingUrl                                  "failed"
//	env            env(envName)       {"outcome":"ok","value":"..."}
//	envDenied      env(deniedEnv)                                  "not_found"
//	read           read(readPath)     {"outcome":"ok","text":"..."}
//	readMissing    read(missingPath)                               "not_found"
//	write          write(writePath, writeData)                     "ok"
//	readBack       read(writePath)    {"outcome":"ok","text":"<writeData>"}
//	writeReadOnly  write(readOnlyPath, writeData)                  "denied"
//	escape         read(escapePath)                                "invalid"
//	bigWrite       write(writePath+".big", bigWrite bytes of 'x')  "limit"
//	log            one line at each level, debug to error, "conformance: <level>"; "ok"
//
// The values shown are what a correct host gives for the fixture described above. The
// keys fetch, fetchPost, env, read and readBack hold objects; when their outcome is not
// "ok" the object is {"outcome":"<outcome>"} and nothing else. The other keys hold the
// outcome string. The env host call cannot tell "unset" from "not granted" by design,
// so env outcomes are only "ok" or "not_found". The envelope is always success:true.
// Bodies and files in the fixture are UTF-8 text, so that "body" and "text" compare
// equal across languages whose JSON encoders treat invalid UTF-8 differently.
package main

import (
	"bytes"
	"errors"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

type args struct {
	FetchURL     string `json:"fetchUrl"`
	DeniedURL    string `json:"deniedUrl"`
	MissingURL   string `json:"missingUrl"`
	EnvName      string `json:"envName"`
	DeniedEnv    string `json:"deniedEnv"`
	ReadPath     string `json:"readPath"`
	MissingPath  string `json:"missingPath"`
	WritePath    string `json:"writePath"`
	WriteData    string `json:"writeData"`
	ReadOnlyPath string `json:"readOnlyPath"`
	EscapePath   string `json:"escapePath"`
	BigWrite     int    `json:"bigWrite"`
}

// object is a key whose outcome carries values.
type object map[string]any

type result struct {
	Fetch         object `json:"fetch"`
	FetchPost     object `json:"fetchPost"`
	FetchDenied   string `json:"fetchDenied"`
	FetchMissing  string `json:"fetchMissing"`
	Env           object `json:"env"`
	EnvDenied     string `json:"envDenied"`
	Read          object `json:"read"`
	ReadMissing   string `json:"readMissing"`
	Write         string `json:"write"`
	ReadBack      object `json:"readBack"`
	WriteReadOnly string `json:"writeReadOnly"`
	Escape        string `json:"escape"`
	BigWrite      string `json:"bigWrite"`
	Log           string `json:"log"`
}

const skipped = "skipped"

//go:wasmexport execute
func execute() int32 { return skill.Run(conform) }

func main() {}

func conform(ctx *skill.Context, a args) (result, error) {
	var r result
	r.Fetch = fetch(ctx, a.FetchURL, skill.Request{Method: "GET", URL: a.FetchURL})
	r.FetchPost = fetch(ctx, a.FetchURL, skill.Request{
		Method: "POST", URL: a.FetchURL, Headers: map[string]string{"X-Test": "1"}, Body: []byte("ping"),
	})
	r.FetchDenied = get(ctx, a.DeniedURL)
	r.FetchMissing = get(ctx, a.MissingURL)

	r.Env = env(ctx, a.EnvName)
	r.EnvDenied = env(ctx, a.DeniedEnv)["outcome"].(string)

	r.Read = read(ctx, a.ReadPath)
	r.ReadMissing = read(ctx, a.MissingPath)["outcome"].(string)
	r.Write = write(ctx, a.WritePath, []byte(a.WriteData))
	r.ReadBack = read(ctx, a.WritePath)
	r.WriteReadOnly = write(ctx, a.ReadOnlyPath, []byte(a.WriteData))
	r.Escape = read(ctx, a.EscapePath)["outcome"].(string)
	r.BigWrite = skipped
	if a.BigWrite > 0 && a.WritePath != "" {
		r.BigWrite = write(ctx, a.WritePath+".big", bytes.Repeat([]byte("x"), a.BigWrite))
	}

	ctx.Log(skill.LevelDebug, "conformance: debug")
	ctx.Log(skill.LevelInfo, "conformance: info")
	ctx.Log(skill.LevelWarn, "conformance: warn")
	ctx.Log(skill.LevelError, "conformance: error")
	r.Log = "ok"
	return r, nil
}

// outcome names err the way every conformance guest does.
func outcome(err error) string {
	var e *skill.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &e):
		return e.Status.String()
	}
	return "error: " + err.Error() // not an SDK error: a bug in the guest, made visible
}

func fetch(ctx *skill.Context, url string, req skill.Request) object {
	if url == "" {
		return object{"outcome": skipped}
	}
	resp, err := ctx.Fetch(req)
	if err != nil {
		return object{"outcome": outcome(err)}
	}
	return object{
		"outcome":     "ok",
		"status":      resp.Status,
		"body":        resp.Text(),
		"echo":        resp.Headers["x-echo"],
		"contentType": resp.Headers["content-type"],
	}
}

func get(ctx *skill.Context, url string) string {
	return fetch(ctx, url, skill.Request{Method: "GET", URL: url})["outcome"].(string)
}

func env(ctx *skill.Context, name string) object {
	if name == "" {
		return object{"outcome": skipped}
	}
	v, ok := ctx.Env(name)
	if !ok {
		return object{"outcome": skill.NotFound.String()}
	}
	return object{"outcome": "ok", "value": v}
}

func read(ctx *skill.Context, path string) object {
	if path == "" {
		return object{"outcome": skipped}
	}
	b, err := ctx.ReadFile(path)
	if err != nil {
		return object{"outcome": outcome(err)}
	}
	return object{"outcome": "ok", "text": string(b)}
}

func write(ctx *skill.Context, path string, data []byte) string {
	if path == "" {
		return skipped
	}
	return outcome(ctx.WriteFile(path, data))
}
