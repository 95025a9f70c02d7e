package extismhost

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// Namespace is the wasm import module of the Skillbox host functions.
const Namespace = "extism:host/user"

// maxRequestBytes bounds a fetch request head (JSON) copied out of guest memory.
const maxRequestBytes = 64 << 10

// reply is a host function's answer before it is written to guest memory (docs/abi.md §3): a
// status byte, then the value on OK or the message otherwise.
type reply struct {
	status  hostfuncs.Status
	payload []byte
}

// replyOf turns an operation's result into a reply.
func replyOf(value []byte, err error) reply {
	if err != nil {
		s, msg := hostfuncs.StatusOf(err)
		return reply{s, []byte(msg)}
	}
	return reply{hostfuncs.StatusOK, value}
}

func invalid(format string, args ...any) reply {
	return reply{hostfuncs.StatusInvalid, []byte(fmt.Sprintf(format, args...))}
}

func (r reply) encode() []byte {
	out := make([]byte, 1+len(r.payload))
	out[0] = byte(r.status)
	copy(out[1:], r.payload)
	return out
}

// fetchReply is the OK payload of skillbox_fetch: the response head as JSON, framed with the raw
// body.
func fetchReply(resp *hostfuncs.FetchResponse, err error) reply {
	if err != nil {
		return replyOf(nil, err)
	}
	head, err := json.Marshal(resp)
	if err != nil {
		return reply{hostfuncs.StatusFailed, []byte("encode the response head: " + err.Error())}
	}
	return reply{hostfuncs.StatusOK, frame(head, resp.Body)}
}

// frame joins a JSON head and a raw body as the fetch payload: u32 LE head length, head, body.
func frame(head, body []byte) []byte {
	out := make([]byte, 4+len(head)+len(body))
	binary.LittleEndian.PutUint32(out, uint32(len(head)))
	copy(out[4:], head)
	copy(out[4+len(head):], body)
	return out
}

// unframe splits a fetch payload; it is what guest SDKs do, kept here for tests and fuzzing.
func unframe(p []byte) (head, body []byte, err error) {
	if len(p) < 4 {
		return nil, nil, fmt.Errorf("payload of %d bytes is shorter than its length prefix", len(p))
	}
	n := binary.LittleEndian.Uint32(p)
	if uint64(n) > uint64(len(p)-4) {
		return nil, nil, fmt.Errorf("head length %d exceeds the %d bytes that follow", n, len(p)-4)
	}
	return p[4 : 4+n], p[4+n:], nil
}
