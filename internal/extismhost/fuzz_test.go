package extismhost

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// FuzzHostFunctions hands every host function arbitrary argument blocks and offsets, as a hostile
// guest would, on a grant with a file mount, an env value and no network: a function answers
// with a reply block or stops the run with a GuestFault, never anything else, never writes
// outside the mount, and never reaches the network.
func FuzzHostFunctions(f *testing.F) {
	for _, seed := range []struct {
		fn   uint8
		a, b []byte
		offA uint64
	}{
		{0, []byte(`{"url":"http://example.com/"}`), []byte("body"), 0},
		{0, []byte(`{"method":"TRACE","url":"ftp://x"}`), nil, 0},
		{1, []byte("NAME"), nil, 0},
		{2, []byte("/ws/in.txt"), nil, 0},
		{2, []byte("/ws/../../etc/passwd"), nil, 0},
		{3, []byte("/ws/out.txt"), []byte("data"), 0},
		{3, []byte("/skill/x"), []byte("data"), 0},
		{4, []byte("a log line\x1b[31m"), nil, 0},
		{1, nil, nil, 12345},
	} {
		f.Add(seed.fn, seed.a, seed.b, seed.offA, uint32(2))
	}
	ws := f.TempDir()
	f.Fuzz(func(t *testing.T, fn uint8, a, b []byte, offA uint64, level uint32) {
		h := hostFunctions[int(fn)%len(hostFunctions)]
		c := hostfuncs.NewCall(&hostfuncs.Grant{
			Env:    map[string]string{"NAME": "value"},
			Mounts: []hostfuncs.Mount{{Path: "/ws", Dir: ws, Writable: true}},
			Limits: hostfuncs.Limits{MaxFetches: 4, MaxFetchBytes: 1 << 10, MaxFileBytes: 1 << 10,
				MaxWriteBytes: 1 << 10, MaxLogBytes: 1 << 10, FetchTimeout: time.Second},
		})
		mem := &memBlocks{blocks: map[uint64][]byte{}}
		offB := uint64(0)
		if offA == 0 && len(a) > 0 {
			offA = 7
			mem.blocks[offA] = a
		}
		if len(b) > 0 {
			offB = 11
			mem.blocks[offB] = b
		}
		stack := []uint64{offA, offB}
		if h.name == "skillbox_log" {
			stack = []uint64{uint64(level), offA}
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					var gf *GuestFault
					if err, ok := r.(error); !ok || !errors.As(err, &gf) || c.Fault() == nil {
						t.Fatalf("%s panicked with %v, not a recorded guest fault", h.name, r)
					}
				}
			}()
			h.h(context.Background(), c, mem, stack)
		}()
		if c.Fault() != nil {
			return
		}
		if h.name != "skillbox_log" {
			reply, ok := mem.blocks[stack[0]]
			if !ok || len(reply) == 0 || reply[0] > byte(hostfuncs.StatusFailed) {
				t.Fatalf("%s answered %q at offset %d, not a reply block", h.name, reply, stack[0])
			}
		}
		if u := c.Usage(); u.Fetches != 0 || len(u.HostsContacted) != 0 {
			t.Fatalf("%s reached the network without a network grant: %+v", h.name, u)
		}
	})
}
