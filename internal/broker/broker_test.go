package broker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// stuckHost is a Host whose Fetch ignores its context, as a buggy host method might.
type stuckHost struct {
	CallHost
	release chan struct{}
}

func (h stuckHost) Fetch(context.Context, hostfuncs.FetchRequest) (*hostfuncs.FetchResponse, error) {
	<-h.release
	return nil, nil
}

func serve(t *testing.T, b *Broker, req string) Reply {
	t.Helper()
	var r Reply
	if err := json.Unmarshal(b.ServeJSON(context.Background(), []byte(req)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestServe(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &hostfuncs.Grant{
		Env:    map[string]string{"GREETING": "hi"},
		Mounts: []hostfuncs.Mount{{Path: "/data", Dir: dir, Writable: true}},
		Limits: hostfuncs.Limits{MaxLogBytes: 1 << 20, MaxFileBytes: 1 << 20, MaxWriteBytes: 1 << 20},
	}
	call := hostfuncs.NewCall(g)
	b := &Broker{Host: CallHost{Call: call}}
	tests := []struct {
		name, req  string
		value      any
		status     string
		errContain string
	}{
		{"env granted", `{"op":"env","name":"GREETING"}`, "hi", "", ""},
		{"env absent is null", `{"op":"env","name":"HOME"}`, nil, "", ""},
		{"read text", `{"op":"readFile","path":"/data/in.txt"}`, "hello", "", ""},
		{"read bytes", `{"op":"readFile","path":"/data/in.txt","bytes":true}`, "aGVsbG8=", "", ""},
		{"read outside the mounts", `{"op":"readFile","path":"/etc/passwd"}`, nil, "denied", ""},
		{"write text", `{"op":"writeFile","path":"/data/out.txt","data":"x"}`, nil, "", ""},
		{"write bad base64", `{"op":"writeFile","path":"/data/out.txt","data64":"%%"}`, nil, "invalid", "base64"},
		{"write without data", `{"op":"writeFile","path":"/data/out.txt"}`, nil, "invalid", "text or bytes"},
		{"fetch without a grant", `{"op":"fetch","url":"http://127.0.0.1:1/"}`, nil, "denied", ""},
		{"bad log level", `{"op":"log","level":"loud","message":"m"}`, nil, "invalid", "use debug"},
		{"unknown op", `{"op":"exec"}`, nil, "invalid", "unknown operation"},
		{"malformed", `{"op":`, nil, "invalid", "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := serve(t, b, tt.req)
			if r.Status != tt.status || !strings.Contains(r.Error, tt.errContain) {
				t.Fatalf("reply %+v, want status %q and an error containing %q", r, tt.status, tt.errContain)
			}
			if tt.status == "" && r.Value != tt.value {
				t.Fatalf("value %#v, want %#v", r.Value, tt.value)
			}
		})
	}
	if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != "x" {
		t.Fatalf("written file: %q, %v", got, err)
	}
	if b.Calls != len(tests) {
		t.Fatalf("Calls = %d, want %d", b.Calls, len(tests))
	}
	if call.Refused() == 0 {
		t.Fatal("the refusals were not counted on the run's call")
	}
	serve(t, b, "{\"op\":\"log\",\"level\":\"warn\",\"message\":\"bad \xff byte\"}")
	logs, _ := call.Logs()
	if len(logs) == 0 {
		t.Fatal("no log recorded")
	}
	if last := logs[len(logs)-1]; last.Level != "warn" || last.Message != "bad \uFFFD byte" || last.Source != "ctx" {
		t.Fatalf("last log %+v", last)
	}
}

// A host method that never returns holds the guest no longer than the operation's timeout.
func TestServeTimeout(t *testing.T) {
	h := stuckHost{CallHost: CallHost{Call: hostfuncs.NewCall(&hostfuncs.Grant{})}, release: make(chan struct{})}
	defer close(h.release)
	b := &Broker{Host: h, Timeout: 20 * time.Millisecond}
	r := serve(t, b, `{"op":"fetch","url":"http://127.0.0.1:1/"}`)
	if r.Status != "timeout" || !strings.Contains(r.Error, "did not answer in time") {
		t.Fatalf("reply %+v, want a timeout", r)
	}
}

func TestTooLarge(t *testing.T) {
	var r Reply
	if err := json.Unmarshal(TooLarge(16), &r); err != nil || r.Status != "limit" {
		t.Fatalf("%+v, %v", r, err)
	}
}
