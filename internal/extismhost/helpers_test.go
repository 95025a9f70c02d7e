package extismhost

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
)

// The SkillContext's names, so the tests read as the ABI does.
type (
	Call   = hostfuncs.Call
	Grant  = hostfuncs.Grant
	Mount  = hostfuncs.Mount
	Limits = hostfuncs.Limits
	Status = hostfuncs.Status
)

const (
	StatusOK       = hostfuncs.StatusOK
	StatusNotFound = hostfuncs.StatusNotFound
	StatusDenied   = hostfuncs.StatusDenied
	StatusInvalid  = hostfuncs.StatusInvalid
	StatusLimit    = hostfuncs.StatusLimit
	StatusFailed   = hostfuncs.StatusFailed

	LevelDebug = hostfuncs.LevelDebug
	LevelInfo  = hostfuncs.LevelInfo
	LevelWarn  = hostfuncs.LevelWarn
	LevelError = hostfuncs.LevelError
)

var NewCall = hostfuncs.NewCall

const logEntryCost = hostfuncs.LogEntryCost

func ok(payload []byte) reply { return reply{StatusOK, payload} }

func fail(s Status, format string, args ...any) reply {
	r := invalid(format, args...)
	r.status = s
	return r
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

// newRecorder is a loopback HTTP server running h.
func newRecorder(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func grantList(t testing.TB, patterns ...string) netguard.List {
	t.Helper()
	var l netguard.List
	for _, s := range patterns {
		p, err := netguard.ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		l = append(l, p)
	}
	return l
}

var allowLoopback = netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

func request(method, url string, headers map[string]string) []byte {
	b, err := json.Marshal(hostfuncs.FetchRequest{Method: method, URL: url, Headers: headers})
	if err != nil {
		panic(err)
	}
	return b
}

// fetchOK fails t unless r is OK, and returns its decoded head and body, checking the wire form
// of docs/abi.md §4: a u32 head length, a head of exactly status, url and headers (lower-case
// names), then the raw body.
func fetchOK(t *testing.T, r reply) (hostfuncs.FetchResponse, []byte) {
	t.Helper()
	wantReply(t, r, StatusOK)
	head, body, err := unframe(r.payload)
	if err != nil {
		t.Fatalf("unframe: %v", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(head, &keys); err != nil {
		t.Fatalf("head %q: %v", head, err)
	}
	for k := range keys {
		if k != "status" && k != "url" && k != "headers" {
			t.Errorf("head has unexpected key %q", k)
		}
	}
	var h hostfuncs.FetchResponse
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		t.Fatalf("head %q: %v", head, err)
	}
	for k := range h.Headers {
		if k != strings.ToLower(k) {
			t.Errorf("head header %q is not lower case", k)
		}
	}
	return h, body
}

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
