package skill

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// fetchPayload frames head and body the way the host does.
func fetchPayload(head string, body []byte) []byte {
	p := binary.LittleEndian.AppendUint32(nil, uint32(len(head)))
	p = append(p, head...)
	return append(p, body...)
}

func TestSplitReply(t *testing.T) {
	tests := []struct {
		name    string
		reply   []byte
		payload string
		err     error  // sentinel expected, nil for OK
		text    string // expected error text
	}{
		{name: "ok with payload", reply: []byte("\x00value"), payload: "value"},
		{name: "ok empty", reply: []byte{0}, payload: ""},
		{name: "not found", reply: []byte("\x01no such file"), err: ErrNotFound, text: "env: not found: no such file"},
		{name: "denied", reply: []byte("\x02host \"x\" is not on the grant"), err: ErrDenied, text: `env: denied: host "x" is not on the grant`},
		{name: "invalid", reply: []byte("\x03bad"), err: ErrInvalid, text: "env: invalid: bad"},
		{name: "limit", reply: []byte("\x04quota"), err: ErrLimit, text: "env: limit: quota"},
		{name: "failed", reply: []byte("\x05refused"), err: ErrFailed, text: "env: failed: refused"},
		{name: "failed without message", reply: []byte{5}, err: ErrFailed, text: "env: failed"},
		{name: "empty reply", reply: nil, err: ErrFailed, text: "env: failed: empty reply from host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			payload, err := splitReply("env", tc.reply)
			if tc.err == nil {
				if err != nil || string(payload) != tc.payload {
					t.Fatalf("got (%q, %v), want (%q, nil)", payload, err, tc.payload)
				}
				return
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v is not %v", err, tc.err)
			}
			if err.Error() != tc.text {
				t.Fatalf("error text %q, want %q", err.Error(), tc.text)
			}
		})
	}
}

func TestSplitReplyUnknownStatus(t *testing.T) {
	_, err := splitReply("fetch", []byte("\x09future"))
	var e *Error
	if !errors.As(err, &e) || e.Status != 9 {
		t.Fatalf("got %v, want an *Error with status 9", err)
	}
	for _, s := range []error{ErrNotFound, ErrDenied, ErrInvalid, ErrLimit, ErrFailed} {
		if errors.Is(err, s) {
			t.Fatalf("unknown status matches %v", s)
		}
	}
	if got, want := err.Error(), "fetch: status(9): future"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestEncodeRequest(t *testing.T) {
	tests := []struct {
		req  Request
		want string
	}{
		{Request{URL: "https://example.com/"}, `{"url":"https://example.com/"}`},
		{
			Request{Method: "POST", URL: "https://a.example/x", Headers: map[string]string{"X-Test": "1"}, Body: []byte("not in the head")},
			`{"method":"POST","url":"https://a.example/x","headers":{"X-Test":"1"}}`,
		},
	}
	for _, tc := range tests {
		got, err := encodeRequest(tc.req)
		if err != nil || string(got) != tc.want {
			t.Errorf("encodeRequest(%+v) = (%s, %v), want %s", tc.req, got, err, tc.want)
		}
	}
}

func TestDecodeResponse(t *testing.T) {
	binaryBody := []byte{0, 1, 2, 0xff, 0xfe}
	tests := []struct {
		name    string
		payload []byte
		want    *Response
		errText string
	}{
		{
			name:    "html",
			payload: fetchPayload(`{"status":200,"url":"https://example.com/","headers":{"content-type":"text/html"}}`, []byte("<html>")),
			want:    &Response{Status: 200, URL: "https://example.com/", Headers: map[string]string{"content-type": "text/html"}, Body: []byte("<html>")},
		},
		{
			name:    "binary body",
			payload: fetchPayload(`{"status":201,"url":"u","headers":{}}`, binaryBody),
			want:    &Response{Status: 201, URL: "u", Headers: map[string]string{}, Body: binaryBody},
		},
		{
			name:    "no headers, no body",
			payload: fetchPayload(`{"status":204,"url":"u"}`, nil),
			want:    &Response{Status: 204, URL: "u", Headers: map[string]string{}, Body: []byte{}},
		},
		{name: "short", payload: []byte{1, 0}, errText: "fetch: failed: malformed reply: payload of 2 bytes has no head length"},
		{name: "head too long", payload: []byte{9, 0, 0, 0, '{', '}'}, errText: "fetch: failed: malformed reply: head length 9 exceeds payload of 6 bytes"},
		{name: "huge head length", payload: []byte{0xff, 0xff, 0xff, 0xff}, errText: "fetch: failed: malformed reply: head length 4294967295 exceeds payload of 4 bytes"},
		{name: "bad head", payload: fetchPayload(`{"status":`, nil), errText: "fetch: failed: malformed reply: head: unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeResponse(tc.payload)
			if tc.errText != "" {
				if err == nil || err.Error() != tc.errText || !errors.Is(err, ErrFailed) {
					t.Fatalf("got (%+v, %v), want error %q", got, err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.want.Status || got.URL != tc.want.URL || !bytes.Equal(got.Body, tc.want.Body) || len(got.Headers) != len(tc.want.Headers) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for k, v := range tc.want.Headers {
				if got.Headers[k] != v {
					t.Fatalf("header %q = %q, want %q", k, got.Headers[k], v)
				}
			}
		})
	}
}

// FuzzDecodeResponse checks that no reply, however broken, panics the decoder, and that
// a decoded body is exactly the bytes after the head.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(fetchPayload(`{"status":200,"url":"u","headers":{"a":"b"}}`, []byte("body")))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := decodeResponse(payload)
		if err != nil {
			return
		}
		n := binary.LittleEndian.Uint32(payload)
		if !bytes.Equal(r.Body, payload[4+n:]) {
			t.Fatalf("body %q, want %q", r.Body, payload[4+n:])
		}
	})
}
