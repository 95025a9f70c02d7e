package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/skillbox-dev/skillbox/run"
)

// A run handed to a server (--server) whose permission requests are put to the person at this
// terminal: the run's events come as a stream, each permission_request is asked here, and the
// answer goes back to the server by POST with the same key. The server decides whether the key
// may answer; a refusal is said, and the request waits for whoever may.

// followHandoff reads a handed-off run's events from body to its result, asking asker each
// permission request, and returns the result.
func followHandoff(ctx context.Context, client *http.Client, base, key string, body io.Reader, asker run.Asker, stderr io.Writer) (*run.Result, error) {
	var res *run.Result
	err := readEventStream(body, func(name string, data []byte) error {
		var ev run.Event
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("event %q: %w", name, err)
		}
		switch {
		case ev.Result != nil:
			res = ev.Result
		case ev.Permission != nil && asker != nil:
			q := *ev.Permission
			// The answer is sent while the stream goes on: the server's next events are the
			// answer's, and a person who does not answer leaves the request to its deadline.
			go askForServer(ctx, client, base, key, q, asker, stderr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("the stream ended without the run's result")
	}
	return res, nil
}

// askForServer asks q of the person here and sends their answer to the server.
func askForServer(ctx context.Context, client *http.Client, base, key string, q run.PermissionRequest, asker run.Asker, stderr io.Writer) {
	actx, cancel := context.WithDeadline(ctx, q.Deadline)
	defer cancel()
	a, err := asker.Ask(actx, q)
	if err != nil {
		return // no answer: the run goes on without one at the request's deadline
	}
	body, _ := json.Marshal(a)
	target := strings.TrimSuffix(base, "/") + "/v1/runs/" + url.PathEscape(q.RunID) + "/permission-requests/" + url.PathEscape(q.ID)
	req, err := http.NewRequestWithContext(actx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "skillbox: the answer did not reach the server: %v\n", err)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		_, msg := refusedBy(base, resp.StatusCode, answer)
		fmt.Fprintf(stderr, "skillbox: the answer was refused: %s\n", clean(msg))
	}
}

// maxEventLine bounds one line of a server's event stream: a result event carries the run's
// result and logs on one line.
const maxEventLine = maxHandoffAnswer

// readEventStream reads a server-sent event stream, calling fn with each event's name and data.
func readEventStream(r io.Reader, fn func(name string, data []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var name string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				if err := fn(name, data); err != nil {
					return err
				}
			}
			name, data = "", nil
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	return sc.Err()
}
