package skill

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
)

// This file holds the byte formats of skillbox/v1 (docs/abi.md §3, §4) as pure
// functions: no wasm imports, so they are unit-tested natively and fuzzed like the host's
// side of the same formats.

// splitReply separates a reply block into its status byte and payload. A failure status
// becomes an *Error for op carrying the host's message.
func splitReply(op string, reply []byte) ([]byte, error) {
	if len(reply) == 0 {
		return nil, &Error{Op: op, Status: Failed, Message: "empty reply from host"}
	}
	if st := Status(reply[0]); st != OK {
		return nil, &Error{Op: op, Status: st, Message: string(reply[1:])}
	}
	return reply[1:], nil
}

// wireRequest is the JSON form of a fetch request; the body travels in its own block so
// that it stays binary-safe.
type wireRequest struct {
	Method  string            `json:"method,omitempty"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// encodeRequest returns the request block of skillbox_fetch for req.
func encodeRequest(req Request) ([]byte, error) {
	return json.Marshal(wireRequest{Method: req.Method, URL: req.URL, Headers: req.Headers})
}

// wireHead is the JSON head at the start of a fetch reply's payload.
type wireHead struct {
	Status  int               `json:"status"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// decodeResponse parses the OK payload of skillbox_fetch: a u32 little-endian head
// length N, N bytes of head JSON, then the raw body. The body aliases payload.
func decodeResponse(payload []byte) (*Response, error) {
	if len(payload) < 4 {
		return nil, malformed("payload of " + strconv.Itoa(len(payload)) + " bytes has no head length")
	}
	n := uint64(binary.LittleEndian.Uint32(payload))
	if n > uint64(len(payload)-4) {
		return nil, malformed("head length " + strconv.FormatUint(n, 10) + " exceeds payload of " + strconv.Itoa(len(payload)) + " bytes")
	}
	var head wireHead
	if err := json.Unmarshal(payload[4:4+n], &head); err != nil {
		return nil, malformed("head: " + err.Error())
	}
	if head.Headers == nil {
		head.Headers = map[string]string{}
	}
	return &Response{Status: head.Status, URL: head.URL, Headers: head.Headers, Body: payload[4+n:]}, nil
}

// malformed reports a fetch reply the SDK cannot parse: a host bug or an ABI mismatch,
// which the skill can do nothing about, hence FAILED.
func malformed(msg string) error {
	return &Error{Op: "fetch", Status: Failed, Message: "malformed reply: " + msg}
}
