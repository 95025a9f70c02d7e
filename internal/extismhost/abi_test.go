package extismhost

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestStatusString(t *testing.T) {
	t.Parallel()
	for s, want := range map[Status]string{
		StatusOK: "ok", StatusNotFound: "not_found", StatusDenied: "denied", StatusInvalid: "invalid",
		StatusLimit: "limit", StatusFailed: "failed", 6: "status(6)", 255: "status(255)",
	} {
		if got := s.String(); got != want {
			t.Errorf("Status(%d).String() = %q, want %q", uint8(s), got, want)
		}
	}
	// The numbers are the ABI (docs/abi.md §3): they must never move.
	for s, want := range map[Status]uint8{StatusOK: 0, StatusNotFound: 1, StatusDenied: 2,
		StatusInvalid: 3, StatusLimit: 4, StatusFailed: 5} {
		if uint8(s) != want {
			t.Errorf("%v = %d, want %d", s, uint8(s), want)
		}
	}
}

func TestReplyEncode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    reply
		want []byte
	}{
		{"ok empty", ok(nil), []byte{0}},
		{"ok zero-length", ok([]byte{}), []byte{0}},
		{"ok binary", ok([]byte{0, 0xff, 'a', 0}), []byte{0, 0, 0xff, 'a', 0}},
		{"not found", fail(StatusNotFound, "X is not set"), append([]byte{1}, "X is not set"...)},
		{"formatted", fail(StatusLimit, "%d > %s", 5, "four"), append([]byte{4}, "5 > four"...)},
		{"failed", fail(StatusFailed, "boom"), append([]byte{5}, "boom"...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.r.encode()
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("encode = %v, want %v", got, tt.want)
			}
			if got[0] != byte(tt.r.status) || !bytes.Equal(got[1:], tt.r.payload) {
				t.Fatalf("encode = %v does not carry status %v and payload %q", got, tt.r.status, tt.r.payload)
			}
		})
	}
	// encode copies: changing the reply afterwards does not change the encoded block.
	p := []byte("abc")
	r := ok(p)
	enc := r.encode()
	p[0] = 'X'
	if string(enc[1:]) != "abc" {
		t.Errorf("encode aliases the payload: %q", enc[1:])
	}
}

func TestFrameLayout(t *testing.T) {
	t.Parallel()
	got := frame([]byte(`{"a":1}`), []byte{0, 1, 2})
	want := append([]byte{7, 0, 0, 0}, `{"a":1}`...)
	want = append(want, 0, 1, 2)
	if !bytes.Equal(got, want) {
		t.Fatalf("frame = %v, want %v", got, want)
	}
	// A head of 0x01020304 bytes would be written little-endian; check the prefix encoding on a
	// head of 258 bytes (0x0102): 02 01 00 00.
	got = frame(bytes.Repeat([]byte("h"), 258), nil)
	if !bytes.Equal(got[:4], []byte{2, 1, 0, 0}) || len(got) != 262 {
		t.Fatalf("frame prefix = %v (len %d), want [2 1 0 0] (len 262)", got[:4], len(got))
	}
}

func TestFrameUnframeRoundTrip(t *testing.T) {
	t.Parallel()
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	tests := []struct {
		name       string
		head, body []byte
	}{
		{"both empty", nil, nil},
		{"head only", []byte(`{"status":200}`), nil},
		{"body only", nil, []byte("body")},
		{"binary body", []byte(`{}`), allBytes},
		{"binary head", allBytes, allBytes[:3]},
		{"large body", []byte(`{}`), bytes.Repeat([]byte{0xfe}, 1<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := frame(tt.head, tt.body)
			if len(p) != 4+len(tt.head)+len(tt.body) {
				t.Fatalf("len(frame) = %d, want %d", len(p), 4+len(tt.head)+len(tt.body))
			}
			head, body, err := unframe(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(head, tt.head) || !bytes.Equal(body, tt.body) {
				t.Fatalf("unframe(frame(h, b)) = %q, %q; want %q, %q", head, body, tt.head, tt.body)
			}
		})
	}
}

func TestUnframeErrors(t *testing.T) {
	t.Parallel()
	le := func(n uint32, rest ...byte) []byte {
		return append(binary.LittleEndian.AppendUint32(nil, n), rest...)
	}
	tests := []struct {
		name string
		p    []byte
		want string
	}{
		{"nil", nil, "payload of 0 bytes is shorter than its length prefix"},
		{"three bytes", []byte{1, 0, 0}, "payload of 3 bytes is shorter"},
		{"length past end", le(5, 'a', 'b'), "head length 5 exceeds the 2 bytes that follow"},
		{"length one past", le(3, 'a', 'b'), "head length 3 exceeds the 2 bytes"},
		{"max length", le(0xffffffff, 'x'), "head length 4294967295 exceeds the 1 bytes"},
		{"high bit", le(0x80000000), "head length 2147483648 exceeds the 0 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			head, body, err := unframe(tt.p)
			if err == nil {
				t.Fatalf("unframe(%v) = %q, %q, nil; want an error", tt.p, head, body)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if head != nil || body != nil {
				t.Errorf("unframe returned data with its error: %q, %q", head, body)
			}
		})
	}
	// Exactly a prefix of 0 is a valid empty frame.
	head, body, err := unframe(le(0))
	if err != nil || len(head) != 0 || len(body) != 0 {
		t.Errorf("unframe(00000000) = %q, %q, %v; want empty, empty, nil", head, body, err)
	}
}

func FuzzUnframe(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{0, 0, 0, 0}, uint16(1))
	f.Add(frame([]byte(`{"status":200,"url":"http://x/","headers":{}}`), []byte("body")), uint16(7))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, uint16(2))
	f.Add([]byte{3, 0, 0, 0, 'a', 'b'}, uint16(9))
	f.Fuzz(func(t *testing.T, p []byte, cut uint16) {
		head, body, err := unframe(p)
		if err == nil {
			if len(p) < 4 || 4+len(head)+len(body) != len(p) {
				t.Fatalf("unframe(%v) accepted a payload whose parts do not add up", p)
			}
			if re := frame(head, body); !bytes.Equal(re, p) {
				t.Fatalf("frame(unframe(p)) = %v, want %v", re, p)
			}
		} else if len(p) >= 4 && uint64(binary.LittleEndian.Uint32(p)) <= uint64(len(p)-4) {
			t.Fatalf("unframe(%v) refused a well-formed payload: %v", p, err)
		}
		// Any split of p round-trips through frame and unframe.
		k := 0
		if len(p) > 0 {
			k = int(cut) % (len(p) + 1)
		}
		h, b, err := unframe(frame(p[:k], p[k:]))
		if err != nil || !bytes.Equal(h, p[:k]) || !bytes.Equal(b, p[k:]) {
			t.Fatalf("unframe(frame(%q, %q)) = %q, %q, %v", p[:k], p[k:], h, b, err)
		}
	})
}
