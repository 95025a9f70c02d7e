package hostfuncs

import (
	"context"
	"strings"
	"testing"
)

// The tests check each operation by the answer a guest gets: a status, and a payload (the value,
// or the refusal's message); resp is a fetch's response.
type reply struct {
	status  Status
	payload []byte
	resp    *FetchResponse
}

func answer(value []byte, err error) reply {
	s, msg := StatusOf(err)
	if err != nil {
		return reply{status: s, payload: []byte(msg)}
	}
	return reply{status: StatusOK, payload: value}
}

func (c *Call) env(name []byte) reply {
	v, err := c.Env(context.Background(), string(name))
	return answer([]byte(v), err)
}

func (c *Call) readFile(p []byte) reply { return answer(c.ReadFile(context.Background(), string(p))) }

func (c *Call) writeFile(p, data []byte) reply {
	return answer(nil, c.WriteFile(context.Background(), string(p), data))
}

// fetch decodes head as a guest's JSON request head, as every JSON-carrying ABI does, and fetches.
func (c *Call) fetch(ctx context.Context, head, body []byte) reply {
	req, err := DecodeFetchRequest(head)
	if err != nil {
		return answer(nil, err)
	}
	req.Body = body
	resp, err := c.Fetch(ctx, req)
	if err != nil {
		return answer(nil, err)
	}
	return reply{status: StatusOK, payload: resp.Body, resp: resp}
}

// wantReply fails t unless r has status want and its payload (the message, for a refusal)
// contains every one of subs.
func wantReply(t *testing.T, r reply, want Status, subs ...string) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status = %v (%q), want %v", r.status, r.payload, want)
	}
	for _, s := range subs {
		if !strings.Contains(string(r.payload), s) {
			t.Errorf("message %q does not contain %q", r.payload, s)
		}
	}
}
