// Package skillboxtest runs a Go skill's handler natively, under `go test`, against a
// scripted stand-in for the Skillbox host: no WebAssembly, no runtime, no network.
//
// A Host answers the handler's host calls the way a real run's grant would: fetches from
// scripted routes, environment variables, an in-memory filesystem with read-only and
// read-write mounts, and the per-run limits. What it does not grant it refuses with the
// statuses and messages the real host uses (ErrDenied for a URL or path outside the grant,
// ErrNotFound for a missing file or unset variable, ErrLimit past a quota), so a skill's
// error paths are tested as well as its happy path. After the run the test inspects the
// files written, the lines logged, the requests made and the refusals.
//
//	h := skillboxtest.New(
//		skillboxtest.Mount("/workspace", skillboxtest.ReadWrite),
//		skillboxtest.Route("GET", "https://api.example.com/v1/x", skillboxtest.JSON(200, v)),
//	)
//	res := skillboxtest.Run(h, handler, map[string]any{"name": "Ada"})
//
// Run takes the arguments through JSON and returns the SkillResult envelope the handler's
// skill.Run would have written, so a test sees what a real run's caller sees. The SDK's
// own code (request encoding, reply decoding, error values) is the code a WebAssembly
// build runs; only the host behind it is replaced.
//
// # Notes
//
// The Host follows the host's rules for what a skill may do, not its transport: a route
// answers without a network, a redirect is whatever the responder returns, and the
// address checks made at dial time do not apply. Log lines are kept as the skill wrote
// them, without the escaping the host applies when it records them. A module's own
// limits (memory, timeout, output size) belong to the runtime and are not modelled.
// skillboxtest works in native builds only; compiled for WebAssembly, Run panics.
package skillboxtest

import (
	"sort"
	"sync"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
	"github.com/skillbox-dev/skillbox/sdk/go/internal/hostcall"
)

// Host is a scripted Skillbox host for one test. Build it with New; it is safe for use by
// a handler's goroutines. Its files persist across the runs made on it, like a workspace;
// each Run starts with fresh quotas.
type Host struct {
	mu       sync.Mutex
	env      map[string]string
	mounts   []mount
	files    map[string][]byte
	routes   map[string]Responder // by "METHOD url"
	fallback Responder
	limits   Limits

	fetches   int
	written   int64
	writes    int
	logBytes  int64
	dropped   int
	logs      []Log
	requests  []skill.Request
	denied    []string
	fileCheck []string // File options to check against the mounts once all options are in
}

// Option scripts one part of a Host: a variable, a mount, a file, a route, a limit.
type Option func(*Host)

// Log is one line a skill logged.
type Log struct {
	Level   skill.Level
	Message string
}

// String returns "info: message", the level as the host names it.
func (l Log) String() string { return levelName(l.Level) + ": " + l.Message }

func levelName(l skill.Level) string {
	switch l {
	case skill.LevelDebug:
		return "debug"
	case skill.LevelWarn:
		return "warn"
	case skill.LevelError:
		return "error"
	}
	return "info"
}

// New returns a Host with the options applied. With none it grants nothing, like a
// manifest without permissions: every fetch is denied, every variable is unset, and only
// /skill, the skill's own read-only directory, is mounted.
//
// New panics when a File lies outside every mount: the file could never be read, which is
// a mistake in the test, not something to find out from a refusal.
func New(opts ...Option) *Host {
	h := &Host{
		env:    map[string]string{},
		mounts: []mount{{path: "/skill"}},
		files:  map[string][]byte{},
		routes: map[string]Responder{},
	}
	for _, o := range opts {
		o(h)
	}
	for _, p := range h.fileCheck {
		if _, _, bad := h.resolve(p); bad != nil {
			panic("skillboxtest.File(" + quote(p) + "): " + bad.msg + "; add a skillboxtest.Mount that holds it")
		}
	}
	h.fileCheck = nil
	h.limits = h.limits.withDefaults()
	return h
}

// Env grants the variable name with value.
func Env(name, value string) Option {
	return func(h *Host) { h.env[name] = value }
}

// Context returns a Context whose host calls this Host answers, for testing a function
// that takes one directly rather than through a handler.
func (h *Host) Context() *skill.Context {
	if hostcall.NewContext == nil {
		panic("skillboxtest: runs natively (go test), not in a WebAssembly build")
	}
	return hostcall.NewContext(wire{h}).(*skill.Context)
}

// Logs returns the lines logged so far, in order.
func (h *Host) Logs() []Log {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Log(nil), h.logs...)
}

// DroppedLogs returns how many lines were dropped past Limits.MaxLogBytes.
func (h *Host) DroppedLogs() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dropped
}

// Requests returns every fetch the skill asked for, in order, refused ones included.
func (h *Host) Requests() []skill.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]skill.Request(nil), h.requests...)
}

// Denied returns the refusals an operator would see in the run's usage.denied: a fetch
// off the grant, a path outside the mounts, a write to a read-only mount.
func (h *Host) Denied() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.denied...)
}

// File returns the contents of the file at the virtual path, as scripted or as the skill
// left it, and whether it exists.
func (h *Host) File(path string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.files[path]
	return string(b), ok
}

// Files returns the virtual paths of every file, sorted.
func (h *Host) Files() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	paths := make([]string, 0, len(h.files))
	for p := range h.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// deny records a refusal for Denied. The caller holds h.mu.
func (h *Host) deny(what string) { h.denied = append(h.denied, what) }
