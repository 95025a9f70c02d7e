package hostfuncs

import (
	"encoding/binary"
	"fmt"
)

// Status is the first byte of every reply block (docs/abi.md §3).
type Status uint8

const (
	StatusOK       Status = 0
	StatusNotFound Status = 1
	StatusDenied   Status = 2
	StatusInvalid  Status = 3
	StatusLimit    Status = 4
	StatusFailed   Status = 5
)

var statusNames = [...]string{"ok", "not_found", "denied", "invalid", "limit", "failed"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", s)
}

// Namespace is the wasm import module of the Skillbox host functions.
const Namespace = "extism:host/user"

// ABIVersion names the contract in docs/abi.md.
const ABIVersion = "skillbox/v1"

// Bounds on what the guest may hand the host, so a hostile module cannot make the host copy a
// whole memory to learn that a path is too long.
const (
	maxRequestBytes = 64 << 10 // a fetch request head
	maxPathBytes    = 4096
	maxNameBytes    = 256
)

// reply is a host function's answer before it is written to guest memory.
type reply struct {
	status  Status
	payload []byte
}

func ok(payload []byte) reply { return reply{StatusOK, payload} }

func fail(s Status, format string, args ...any) reply {
	return reply{s, []byte(fmt.Sprintf(format, args...))}
}

func (r reply) encode() []byte {
	out := make([]byte, 1+len(r.payload))
	out[0] = byte(r.status)
	copy(out[1:], r.payload)
	return out
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
