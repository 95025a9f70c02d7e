package skillboxtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

// wire adapts a Host to the SDK's byte-level host boundary: it decodes what the SDK
// sends and encodes replies exactly as the Skillbox host does (a status byte, then the
// payload), so the SDK's own decoding runs in every test. It is a separate type so that
// these byte-level methods stay out of Host's API.
type wire struct{ h *Host }

// Input and Output are never called: Run hands the input to the handler itself.
func (wire) Input() []byte { return nil }
func (wire) Output([]byte) {}

func (w wire) Env(name []byte) []byte {
	v, err := w.h.getenv(string(name))
	return reply([]byte(v), err)
}

func (w wire) ReadFile(path []byte) []byte {
	b, err := w.h.readFile(string(path))
	return reply(b, err)
}

func (w wire) WriteFile(path, data []byte) []byte {
	return reply(nil, w.h.writeFile(string(path), data))
}

func (w wire) Log(level int32, msg []byte) { w.h.log(skill.Level(level), string(msg)) }

func (w wire) Fetch(request, body []byte) []byte {
	resp, err := w.h.fetch(request, body)
	if err != nil {
		return reply(nil, err)
	}
	head, _ := json.Marshal(struct {
		Status  int               `json:"status"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}{resp.Status, resp.URL, resp.Headers})
	out := []byte{byte(skill.OK)}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(head)))
	out = append(out, head...)
	return append(out, resp.Body...)
}

// refusal is a host call answered with a failure status: the status byte and message
// the real host would send.
type refusal struct {
	status skill.Status
	msg    string
}

func (r *refusal) Error() string { return r.status.String() + ": " + r.msg }

func refuse(s skill.Status, format string, args ...any) *refusal {
	return &refusal{status: s, msg: fmt.Sprintf(format, args...)}
}

// reply encodes the reply block of a call that returned payload and err.
func reply(payload []byte, err *refusal) []byte {
	if err != nil {
		return append([]byte{byte(err.status)}, err.msg...)
	}
	return append([]byte{byte(skill.OK)}, payload...)
}

// quote is strconv.Quote, named for the host's %q.
func quote(s string) string { return strconv.Quote(s) }
