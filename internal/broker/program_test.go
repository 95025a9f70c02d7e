package broker

import (
	"context"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// runnerHost is a Host that runs programs by echoing what it was asked.
type runnerHost struct {
	CallHost
	got *ProgramRequest
}

func (h runnerHost) RunProgram(_ context.Context, req ProgramRequest) (*ProgramReply, error) {
	*h.got = req
	return &ProgramReply{Exit: 7, Stdout: "b3V0"}, nil
}

// The run op carries a subprocess request to a Host that is a Runner, checked; any other Host
// refuses it.
func TestServeRun(t *testing.T) {
	call := hostfuncs.NewCall(&hostfuncs.Grant{Limits: hostfuncs.Limits{MaxLogBytes: 1 << 10}})
	if r := serve(t, &Broker{Host: CallHost{Call: call}}, `{"op":"run","path":"/skill/x.py"}`); r.Status != "denied" || !strings.Contains(r.Error, "only a skill's program") {
		t.Fatalf("a host that runs no programs: %+v", r)
	}
	var got ProgramRequest
	b := &Broker{Host: runnerHost{CallHost{Call: call}, &got}}
	r := serve(t, b, `{"op":"run","path":"/skill/x.py","module":"m","argv":["a"],"cwd":"/tmp","stdin":"aW4=","merge":true,"timeout_ms":5}`)
	if v, _ := r.Value.(map[string]any); r.Error != "" || v["exit"] != 7.0 || v["stdout"] != "b3V0" ||
		got.Path != "/skill/x.py" || got.Module != "m" || got.Argv[0] != "a" || got.Cwd != "/tmp" || string(got.Stdin) != "in" || !got.Merge || got.TimeoutMs != 5 {
		t.Fatalf("reply %+v, request %+v", r, got)
	}
	for req, want := range map[string]string{
		`{"op":"run","path":"/skill/x.py","stdin":"%%"}`: "stdin is not valid base64",
		`{"op":"run"}`: "path names no program",
		`{"op":"run","path":"/skill/x.py","timeout_ms":-1}`: "timeout_ms is negative",
	} {
		if r := serve(t, b, req); r.Status != "invalid" || !strings.Contains(r.Error, want) {
			t.Errorf("%s: %+v, want invalid %q", req, r, want)
		}
	}
}
