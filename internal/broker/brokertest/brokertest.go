// Package brokertest is a broker.Host for the tests of the script runners (internal/quickjs,
// internal/cpython): it serves the SkillContext from a real *hostfuncs.Call, as the runtime does,
// records the log lines, and can hold a fetch past its timeout.
package brokertest

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/internal/broker"
)

// Host serves the SkillContext from Call and records the log lines. Block, when set, makes
// Fetch wait for it (ignoring its context) first.
type Host struct {
	Call  *hostfuncs.Call
	Block chan struct{}
	mu    sync.Mutex
	logs  []Line
}

var _ broker.Host = (*Host)(nil)

// Line is one log line the host received.
type Line struct{ Level, Source, Message string }

// New returns a Host over grant g (a zero MaxLogBytes becomes 1 MiB).
func New(g *hostfuncs.Grant) *Host {
	if g.Limits.MaxLogBytes == 0 {
		g.Limits.MaxLogBytes = 1 << 20
	}
	return &Host{Call: hostfuncs.NewCall(g)}
}

// LoopbackGrant grants fetches of the host patterns, on 127.0.0.1.
func LoopbackGrant(t testing.TB, patterns ...string) *hostfuncs.Grant {
	t.Helper()
	var l netguard.List
	for _, s := range patterns {
		p, err := netguard.ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		l = append(l, p)
	}
	return &hostfuncs.Grant{Hosts: l, Guard: netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		Limits: hostfuncs.Limits{MaxFetches: 10, MaxFetchBytes: 1 << 20}}
}

func (h *Host) Fetch(ctx context.Context, req hostfuncs.FetchRequest) (*hostfuncs.FetchResponse, error) {
	if h.Block != nil {
		<-h.Block
		return nil, errors.New("unblocked too late")
	}
	return h.Call.Fetch(ctx, req)
}

func (h *Host) Env(ctx context.Context, name string) (string, error) {
	return broker.CallHost{Call: h.Call}.Env(ctx, name)
}

func (h *Host) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return broker.CallHost{Call: h.Call}.ReadFile(ctx, p)
}

func (h *Host) WriteFile(ctx context.Context, p string, data []byte) error {
	return broker.CallHost{Call: h.Call}.WriteFile(ctx, p, data)
}

func (h *Host) Log(level, source, message string) {
	h.mu.Lock()
	h.logs = append(h.logs, Line{level, source, message})
	h.mu.Unlock()
	h.Call.Log(level, source, message)
}

// Lines returns the log lines received so far.
func (h *Host) Lines() []Line {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Line(nil), h.logs...)
}
