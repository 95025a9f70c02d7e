package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
)

// A one-shot `skillbox run` starts a runtime, reads and checks the skill, loads its module from
// the compilation cache (wazero validates every function again on each load) and instruments it:
// most of a cold run, and several times what python3 takes to start. A `skillbox serve` that is
// already running holds all of that ready. `run --server URL` (or SKILLBOX_SERVER) hands the run
// to it over its HTTP API and prints the outcome as a local run would. It is opt-in: the CLI
// never starts a server, and a server it cannot reach is an error, never a silent local run
// (the server's skills and policy are not this directory's).

// serverEnv and keyEnv name the environment variables run reads: the server to hand runs to,
// and the API key to send it (a key in a flag would show in the process list).
const (
	serverEnv = "SKILLBOX_SERVER"
	keyEnv    = "SKILLBOX_API_KEY"
)

// Bounds of a handoff: how long connecting may take (the run itself is bounded by the server's
// limits and by the CLI's context), and how much of the server's answer is read.
const (
	handoffDial      = 5 * time.Second
	maxHandoffAnswer = 64 << 20
)

// handoffTarget is where run sends its runs, from --server or SKILLBOX_SERVER, or "" to run here.
func (e *env) handoffTarget() string {
	if e.server != "" {
		return e.server
	}
	return os.Getenv(serverEnv)
}

// handoffURL checks base and returns the URL that runs skill id there. A key is never sent in
// clear to another machine: with one, plain http is for loopback addresses only.
func handoffURL(base, id, key string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not a server's URL: give http://HOST:PORT of a running skillbox serve", base)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%q: give the server's base URL alone, without a query, a fragment or a user", base)
	}
	if key != "" && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return "", fmt.Errorf("%s would go in clear to %s: use https://, or a loopback address", keyEnv, u.Host)
	}
	return strings.TrimSuffix(u.String(), "/") + "/v1/skills/" + url.PathEscape(id) + "/runs", nil
}

// isLoopback reports whether host (a name or an address) is this machine's loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// handoff runs skill id on the server at base and prints the outcome; it returns the exit code.
func (e *env) handoff(ctx context.Context, base, id string) int {
	key := os.Getenv(keyEnv)
	target, err := handoffURL(base, id, key)
	if err != nil {
		return e.fail(exitUsage, "--server: %v", err)
	}
	// The server bounds the arguments by its own policy; this bounds what is read here.
	args, err := readArgs(e.args, e.stdin, policy.MaxArgsBytesCeiling)
	if err != nil {
		return e.fail(exitUsage, "--args: %v", err)
	}
	if !json.Valid(args) {
		return e.fail(exitUsage, "--args: not JSON")
	}
	body, err := json.Marshal(struct {
		Args json.RawMessage `json:"args"`
	}{args})
	if err != nil {
		return e.fail(exitUsage, "--args: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return e.fail(exitUsage, "--server: %v", err)
	}
	asker, err := e.asker()
	if err != nil {
		return e.fail(exitUsage, "%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if asker != nil {
		// The run's events, to put its permission requests to the person here as they come.
		req.Header.Set("Accept", "text/event-stream")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	client := &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: handoffDial}).DialContext,
		TLSHandshakeTimeout:   handoffDial,
		ResponseHeaderTimeout: 0, // the run takes what it takes: the server's limits bound it
	}}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return e.fail(exitFailed, "the run was interrupted: %v", ctx.Err())
		}
		return e.fail(exitFailed, "cannot reach the server at %s (--server, %s): %v; start one with skillbox serve, or unset %s to run here",
			base, serverEnv, err, serverEnv)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		res, err := followHandoff(ctx, client, base, key, resp.Body, asker, e.stderr)
		if err != nil {
			return e.fail(exitFailed, "reading the run's events from %s: %v", base, err)
		}
		return e.printRun(res, serverRunErr(res), "")
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxHandoffAnswer+1))
	if err != nil {
		return e.fail(exitFailed, "reading the answer of %s: %v", base, err)
	}
	if len(answer) > maxHandoffAnswer {
		return e.fail(exitFailed, "the answer of %s is larger than %d MiB: read the run with GET /v1/runs/{id}", base, maxHandoffAnswer>>20)
	}
	if resp.StatusCode != http.StatusOK {
		code, msg := refusedBy(base, resp.StatusCode, answer)
		if e.json { // as a local run that is refused prints it: a result with its error
			return e.printRun(&run.Result{Skill: id, Logs: []run.LogEntry{},
				Error: &run.ResultError{Kind: code, Message: msg}}, errors.New(msg), "")
		}
		return e.fail(exitFailed, "%s", msg)
	}
	var res run.Result
	if err := json.Unmarshal(answer, &res); err != nil {
		return e.fail(exitFailed, "the answer of %s is not a run's result: %v", base, err)
	}
	return e.printRun(&res, serverRunErr(&res), "")
}

// serverRunErr is the error a run the server ran ended with, nil when it
// succeeded; a failed result that says no why gets one, so the exit code and
// the printed result agree.
func serverRunErr(res *run.Result) error {
	if res.Success {
		return nil
	}
	if res.Error == nil {
		res.Error = &run.ResultError{Kind: run.KindInternal, Message: "the server said the run failed, without why"}
	}
	return errors.New(res.Error.Message)
}

// refusedBy says what the server at base answered with a status other than 200: the API's error
// code as a run's error kind ("internal" when it sent none) and its message, with what to do
// about a refused key.
func refusedBy(base string, status int, answer []byte) (run.ErrorKind, string) {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	kind, msg := run.KindInternal, strings.TrimSpace(string(answer[:min(len(answer), 512)]))
	if json.Unmarshal(answer, &body) == nil && body.Error.Message != "" {
		msg = body.Error.Message
		if body.Error.Code != "" {
			kind = run.ErrorKind(body.Error.Code)
		}
	}
	say := fmt.Sprintf("%s (the server at %s answered %d)", msg, base, status)
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		say += "; set " + keyEnv + " to a key the server takes"
	}
	return kind, say
}
