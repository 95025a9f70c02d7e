package extismhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"
)

// The tests below run the host functions the way a skill does: a real Extism plugin (the kernel's
// memory blocks, pluginMemory, the wazero call path) built from a guest assembled here, so every
// function's argument wiring and size bounds are exercised through guest memory.

// guest describes a generated module whose execute export copies the call's input into up to two
// Extism blocks (the first lenA bytes, then the next lenB bytes), calls one host function with
// them, and outputs the reply block. A zero length passes offset 0 ("absent"); offsetA/offsetB,
// when set, pass that raw offset instead (a guest fault). skillbox_log gets level as its i32.
type guest struct {
	fn               string
	lenA, lenB       int
	offsetA, offsetB uint64
	level            int32
}

// wasm assembles the module. It imports no memory of its own: all data goes through the kernel.
func (g guest) wasm() []byte {
	const (
		i32, i64                     = 0x7f, 0x7e
		fInputLoad, fAlloc, fStore   = 0, 1, 2
		fLength, fOutputSet, fHost   = 3, 4, 5
		tExec, tLoad, tI64I64, tSt   = 0, 1, 2, 3
		tOut, tHost2, tLog           = 4, 5, 6
		localA, localB, localI, lR   = 0, 1, 2, 3
		opBlock, opLoop, opEnd, opBr = 0x02, 0x03, 0x0b, 0x0c
	)
	types := [][2][]byte{
		{nil, {i32}},        // execute
		{{i64}, {i32}},      // input_load_u8
		{{i64}, {i64}},      // alloc, length, env, read_file
		{{i64, i32}, nil},   // store_u8
		{{i64, i64}, nil},   // output_set
		{{i64, i64}, {i64}}, // fetch, write_file
		{{i32, i64}, nil},   // log
	}
	hostType := map[string]int{"skillbox_env": tI64I64, "skillbox_read_file": tI64I64,
		"skillbox_fetch": tHost2, "skillbox_write_file": tHost2, "skillbox_log": tLog}[g.fn]

	var code []byte
	op := func(b ...byte) { code = append(code, b...) }
	i64c := func(v int64) { op(0x42); code = appendSLEB(code, v) }
	local := func(get bool, i int) {
		if get {
			op(0x20, byte(i))
		} else {
			op(0x21, byte(i))
		}
	}
	// block := alloc(n); copy input[from:from+n] into it.
	fill := func(dst, from, n int, raw uint64) {
		switch {
		case raw != 0:
			i64c(int64(raw))
			local(false, dst)
			return
		case n == 0:
			return // the local stays 0
		}
		i64c(int64(n))
		op(0x10, fAlloc)
		local(false, dst)
		i64c(0)
		local(false, localI)
		op(opBlock, 0x40, opLoop, 0x40)
		local(true, localI)
		i64c(int64(n))
		op(0x5a, 0x0d, 1) // i64.ge_u; br_if 1
		local(true, dst)
		local(true, localI)
		op(0x7c) // i64.add
		local(true, localI)
		i64c(int64(from))
		op(0x7c, 0x10, fInputLoad, 0x10, fStore)
		local(true, localI)
		i64c(1)
		op(0x7c)
		local(false, localI)
		op(opBr, 0, opEnd, opEnd)
	}
	fill(localA, 0, g.lenA, g.offsetA)
	fill(localB, g.lenA, g.lenB, g.offsetB)
	switch hostType {
	case tLog:
		op(0x41)
		code = appendSLEB(code, int64(g.level))
		local(true, localA)
		op(0x10, fHost)
	default:
		local(true, localA)
		if hostType == tHost2 {
			local(true, localB)
		}
		op(0x10, fHost)
		local(false, lR)
		local(true, lR)
		local(true, lR)
		op(0x10, fLength, 0x10, fOutputSet)
	}
	op(0x41, 0, opEnd) // i32.const 0; end

	body := append([]byte{1, 4, i64}, code...) // one group of 4 i64 locals
	var typeSec []byte
	typeSec = appendULEB(typeSec, uint64(len(types)))
	for _, t := range types {
		typeSec = append(typeSec, 0x60)
		typeSec = appendVec(typeSec, t[0])
		typeSec = appendVec(typeSec, t[1])
	}
	imports := []struct {
		mod, name string
		typ       int
	}{
		{"extism:host/env", "input_load_u8", tLoad}, {"extism:host/env", "alloc", tI64I64},
		{"extism:host/env", "store_u8", tSt}, {"extism:host/env", "length", tI64I64},
		{"extism:host/env", "output_set", tOut}, {Namespace, g.fn, hostType},
	}
	var importSec []byte
	importSec = appendULEB(importSec, uint64(len(imports)))
	for _, im := range imports {
		importSec = appendVec(importSec, []byte(im.mod))
		importSec = appendVec(importSec, []byte(im.name))
		importSec = append(importSec, 0, byte(im.typ))
	}
	exportSec := appendVec([]byte{1}, []byte("execute"))
	exportSec = append(exportSec, 0, 6) // func index 6: after the 6 imports
	codeSec := appendVec([]byte{1}, body)

	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	for _, s := range []struct {
		id   byte
		data []byte
	}{{1, typeSec}, {2, importSec}, {3, []byte{1, tExec}}, {7, exportSec}, {10, codeSec}} {
		out = append(out, s.id)
		out = appendVec(out, s.data)
	}
	return out
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendVec(b, data []byte) []byte { return append(appendULEB(b, uint64(len(data))), data...) }

// run instantiates g and calls execute with input a+b, with c as the run's state (nil: no state
// in the context). It returns the output and the call's error.
func (g guest) run(t *testing.T, c *Call, a, b []byte) ([]byte, error) {
	t.Helper()
	if g.lenA == 0 && g.offsetA == 0 {
		g.lenA = len(a)
	}
	if g.lenB == 0 && g.offsetB == 0 {
		g.lenB = len(b)
	}
	ctx := context.Background()
	if c != nil {
		ctx = WithCall(ctx, c)
	}
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: g.wasm(), Name: "main"}}}
	compiled, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{}, Functions())
	if err != nil {
		t.Fatalf("compile %s guest: %v", g.fn, err)
	}
	t.Cleanup(func() { _ = compiled.Close(context.Background()) })
	p, err := compiled.Instance(ctx, extism.PluginInstanceConfig{})
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	defer p.Close(context.Background())
	_, out, err := p.CallWithContext(ctx, "execute", append(append([]byte{}, a...), b...))
	return out, err
}

// outputReply splits an output (a reply block) into status and payload.
func outputReply(t *testing.T, out []byte) reply {
	t.Helper()
	if len(out) == 0 {
		t.Fatal("empty reply block")
	}
	return reply{Status(out[0]), out[1:]}
}

func TestFunctionsDefinitions(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"skillbox_fetch": "[i64 i64] -> [i64]", "skillbox_env": "[i64] -> [i64]",
		"skillbox_read_file": "[i64] -> [i64]", "skillbox_write_file": "[i64 i64] -> [i64]",
		"skillbox_log": "[i32 i64] -> []",
	}
	names := map[extism.ValueType]string{extism.ValueTypeI32: "i32", extism.ValueTypeI64: "i64"}
	sig := func(vs []extism.ValueType) string {
		s := make([]string, len(vs))
		for i, v := range vs {
			s[i] = names[v]
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	fns := Functions()
	if len(fns) != len(want) {
		t.Errorf("%d functions, want %d", len(fns), len(want))
	}
	for _, f := range fns {
		if f.Namespace != "extism:host/user" {
			t.Errorf("%s in namespace %q", f.Name, f.Namespace)
		}
		if got := sig(f.Params) + " -> " + sig(f.Returns); got != want[f.Name] {
			t.Errorf("%s: %s, want %s", f.Name, got, want[f.Name])
		}
	}
}

func TestFunctionsThroughGuestMemory(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	mustWrite(t, filepath.Join(ws, "in.txt"), "file contents\x00\xff")
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Method", r.Method)
		_, _ = io.Copy(w, r.Body)
	})
	newCall := func() *Call {
		return NewCall(&Grant{
			Hosts: grantList(t, "127.0.0.1"), Guard: allowLoopback,
			Env:    map[string]string{"NAME": "value ✓"},
			Mounts: []Mount{{Path: "/ws", Dir: ws, Writable: true}},
			Limits: Limits{MaxFetches: 10, MaxFetchBytes: 16, MaxFileBytes: 1 << 10, MaxWriteBytes: 10, MaxLogBytes: 64},
		})
	}
	fetchHead := request("POST", srv.URL+"/echo", nil)
	tests := []struct {
		name    string
		g       guest
		a, b    []byte
		status  Status
		payload string // exact, except for fetch OK (checked below)
	}{
		{"env granted", guest{fn: "skillbox_env"}, []byte("NAME"), nil, StatusOK, "value ✓"},
		{"env not granted", guest{fn: "skillbox_env"}, []byte("HOME"), nil, StatusNotFound, "HOME is not set"},
		{"env absent name", guest{fn: "skillbox_env"}, nil, nil, StatusInvalid, "variable name must be 1 to 256 bytes"},
		{"env name of 256 bytes", guest{fn: "skillbox_env"}, bytes.Repeat([]byte("N"), 256), nil, StatusNotFound, strings.Repeat("N", 256) + " is not set"},
		{"env name too large", guest{fn: "skillbox_env"}, bytes.Repeat([]byte("N"), 257), nil, StatusInvalid, "env: argument too large: 257 bytes, at most 256"},
		{"read", guest{fn: "skillbox_read_file"}, []byte("/ws/in.txt"), nil, StatusOK, "file contents\x00\xff"},
		{"read missing", guest{fn: "skillbox_read_file"}, []byte("/ws/none"), nil, StatusNotFound, "/ws/none: no such file"},
		{"read path too large", guest{fn: "skillbox_read_file"}, bytes.Repeat([]byte("/"), 4097), nil, StatusInvalid, "read_file: argument too large: 4097 bytes, at most 4096"},
		{"write", guest{fn: "skillbox_write_file"}, []byte("/ws/out/x.bin"), []byte{0, 1, 2, 0xff}, StatusOK, ""},
		{"write empty", guest{fn: "skillbox_write_file"}, []byte("/ws/empty"), nil, StatusOK, ""},
		{"write absent path", guest{fn: "skillbox_write_file"}, nil, []byte("x"), StatusInvalid, "path must be 1 to 4096 bytes"},
		{"write data over the quota", guest{fn: "skillbox_write_file"}, []byte("/ws/big"), bytes.Repeat([]byte("x"), 11), StatusLimit, "write: write_file: argument too large: 11 bytes, at most 10"},
		{"write big data refused before the path is checked", guest{fn: "skillbox_write_file"}, []byte("rel"), bytes.Repeat([]byte("x"), 11), StatusLimit, "write: write_file: argument too large: 11 bytes, at most 10"},
		{"fetch", guest{fn: "skillbox_fetch"}, fetchHead, []byte("ping\x00"), StatusOK, ""},
		{"fetch without body", guest{fn: "skillbox_fetch"}, request("GET", srv.URL, nil), nil, StatusOK, ""},
		{"fetch absent head", guest{fn: "skillbox_fetch"}, nil, nil, StatusInvalid, "the request is not valid JSON: EOF"},
		{"fetch body too large", guest{fn: "skillbox_fetch"}, fetchHead, bytes.Repeat([]byte("b"), 17), StatusInvalid, "fetch: argument too large: 17 bytes, at most 16"},
		{"fetch head too large", guest{fn: "skillbox_fetch"}, bytes.Repeat([]byte(" "), 64<<10+1), nil, StatusInvalid, "fetch: argument too large: 65537 bytes, at most 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCall()
			out, err := tt.g.run(t, c, tt.a, tt.b)
			if err != nil {
				t.Fatalf("call: %v (fault %v)", err, c.Fault())
			}
			r := outputReply(t, out)
			if r.status != tt.status {
				t.Fatalf("status %v %q, want %v", r.status, r.payload, tt.status)
			}
			if c.Fault() != nil {
				t.Errorf("fault recorded: %v", c.Fault())
			}
			if tt.g.fn == "skillbox_fetch" && r.status == StatusOK {
				h, body := fetchOK(t, r)
				if !bytes.Equal(body, tt.b) || h.Status != 200 {
					t.Errorf("fetch: %+v body %q, want the body sent back", h, body)
				}
				return
			}
			if string(r.payload) != tt.payload {
				t.Errorf("payload %q, want %q", r.payload, tt.payload)
			}
		})
	}
	t.Cleanup(func() { // after the parallel subtests
		if got := mustRead(t, filepath.Join(ws, "out", "x.bin")); got != "\x00\x01\x02\xff" {
			t.Errorf("written file holds %q", got)
		}
		if _, err := os.Stat(filepath.Join(ws, "big")); !os.IsNotExist(err) {
			t.Errorf("an over-quota write created its file: %v", err)
		}
	})
}

func TestLogThroughGuestMemory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level   int32
		msg     string
		want    string // level:message, "" when dropped
		dropped int
	}{
		{LevelWarn, "hi\n", `warn:hi\n`, 0},
		{99, "odd level", "info:odd level", 0},
		{-1, "negative", "info:negative", 0},
		{LevelDebug, "x", "debug:x", 0},
		{LevelError, strings.Repeat("y", 16), "error:" + strings.Repeat("y", 16), 0},
		// Over the whole budget: refused before it is copied.
		{LevelError, strings.Repeat("y", 17), "", 1},
		// An empty message passes offset 0 and is kept as an empty entry.
		{LevelInfo, "", "info:", 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%q", tt.level, tt.msg), func(t *testing.T) {
			t.Parallel()
			c := NewCall(&Grant{Limits: Limits{MaxLogBytes: 16 + logEntryCost}}) // one Call per run, as the runtime does
			out, err := guest{fn: "skillbox_log", level: tt.level}.run(t, c, []byte(tt.msg), nil)
			if err != nil || len(out) != 0 {
				t.Fatalf("output %q, err %v", out, err)
			}
			logs, dropped := c.Logs()
			var got string
			if len(logs) == 1 {
				got = logs[0].Level + ":" + logs[0].Message
			}
			if len(logs) > 1 || got != tt.want || dropped != tt.dropped {
				t.Errorf("logs %+v (%q), dropped %d; want %q, %d", logs, got, dropped, tt.want, tt.dropped)
			}
		})
	}
}

// A Call holds the kernel functions of the first plugin instance that used it (memory.go,
// Call.kernel). The runtime makes one Call per run and one instance per run, so this holds
// there; but a Call handed to a second instance reads its arguments from, and writes its replies
// into, the first instance's kernel.
func TestCallReusedAcrossInstances(t *testing.T) {
	t.Parallel()
	c := NewCall(&Grant{Env: map[string]string{"NAME": "value"}})
	for i := range 2 {
		out, err := guest{fn: "skillbox_env"}.run(t, c, []byte("NAME"), nil)
		if err != nil || string(out) != "\x00value" {
			t.Errorf("run %d with the same Call: output %q, err %v; want \"\\x00value\"", i, out, err)
		}
	}
}

func TestGuestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		g      guest
		a, b   []byte
		fn     string
		offset uint64
	}{
		{"env", guest{fn: "skillbox_env", offsetA: 123456789}, nil, nil, "skillbox_env", 123456789},
		{"read_file past memory", guest{fn: "skillbox_read_file", offsetA: 1 << 40}, nil, nil, "skillbox_read_file", 1 << 40},
		{"write_file data", guest{fn: "skillbox_write_file", offsetB: 7}, []byte("/ws/x"), nil, "skillbox_write_file", 7},
		{"fetch body", guest{fn: "skillbox_fetch", offsetB: 7}, []byte(`{}`), nil, "skillbox_fetch", 7},
		{"fetch head", guest{fn: "skillbox_fetch", offsetA: 3}, nil, []byte("body"), "skillbox_fetch", 3},
		{"log", guest{fn: "skillbox_log", offsetA: 99999}, nil, nil, "skillbox_log", 99999},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := NewCall(&Grant{Limits: Limits{MaxFetches: 1, MaxFetchBytes: 1 << 10, MaxWriteBytes: 1 << 10, MaxLogBytes: 1 << 10}})
			_, err := tt.g.run(t, c, tt.a, tt.b)
			if err == nil {
				t.Fatal("the call succeeded; want it stopped")
			}
			var gf *GuestFault
			if !errors.As(c.Fault(), &gf) || !errors.Is(c.Fault(), ErrGuestFault) {
				t.Fatalf("Fault() = %v, want a *GuestFault", c.Fault())
			}
			if gf.Func != tt.fn || gf.Offset != tt.offset {
				t.Errorf("fault %+v, want func %s offset %d", gf, tt.fn, tt.offset)
			}
			if !strings.Contains(err.Error(), tt.fn) {
				t.Errorf("call error %q does not name %s", err, tt.fn)
			}
			if u := c.Usage(); u.Fetches != 0 || len(u.FilesWritten) != 0 {
				t.Errorf("the faulting call acted: %+v", u)
			}
		})
	}
}

func TestHostCallOutsideARun(t *testing.T) {
	t.Parallel()
	_, err := guest{fn: "skillbox_env"}.run(t, nil, []byte("NAME"), nil)
	if err == nil || !strings.Contains(err.Error(), "host call skillbox_env outside a Skillbox run") {
		t.Fatalf("err = %v, want the call refused", err)
	}
}

// memBlocks is a Memory over a map, for the paths a real module cannot reach on demand (an
// allocation failure).
type memBlocks struct {
	blocks    map[uint64][]byte
	failAlloc bool
}

func (m *memBlocks) Block(_ context.Context, off uint64, max int64) ([]byte, error) {
	if off == 0 {
		return nil, nil
	}
	b, ok := m.blocks[off]
	if !ok {
		return nil, errors.New("not a live memory block")
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errTooLarge, len(b), max)
	}
	return bytes.Clone(b), nil
}

func (m *memBlocks) Alloc(_ context.Context, data []byte) (uint64, error) {
	if m.failAlloc {
		return 0, errors.New("guest memory exhausted")
	}
	off := uint64(len(m.blocks)+1) * 1000
	m.blocks[off] = bytes.Clone(data)
	return off, nil
}

// faultOf runs f and returns the *GuestFault it panicked with.
func faultOf(t *testing.T, f func()) (gf *GuestFault) {
	t.Helper()
	defer func() {
		r := recover()
		e, ok := r.(*GuestFault)
		if !ok {
			t.Fatalf("panic value %v (%T), want a *GuestFault", r, r)
		}
		gf = e
	}()
	f()
	return nil
}

func TestArgAndAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := &memBlocks{blocks: map[uint64][]byte{8: []byte("abc")}}
	c := NewCall(&Grant{})

	if b, bad := arg(ctx, c, mem, "skillbox_env", 0, 10); b != nil || bad != nil {
		t.Errorf("offset 0 = %q, %v; want absent", b, bad)
	}
	if b, bad := arg(ctx, c, mem, "skillbox_env", 8, 3); string(b) != "abc" || bad != nil {
		t.Errorf("block = %q, %v", b, bad)
	}
	_, bad := arg(ctx, c, mem, "skillbox_read_file", 8, 2)
	if bad == nil || bad.status != StatusInvalid || string(bad.payload) != "read_file: argument too large: 3 bytes, at most 2" {
		t.Errorf("too large = %+v", bad)
	}
	if c.Fault() != nil {
		t.Fatalf("fault before any bad offset: %v", c.Fault())
	}

	gf := faultOf(t, func() { arg(ctx, c, mem, "skillbox_env", 9, 10) })
	if gf.Func != "skillbox_env" || gf.Offset != 9 || gf.Error() != "host call skillbox_env: not a live memory block (offset 9)" {
		t.Errorf("fault %+v: %q", gf, gf.Error())
	}
	if c.Fault() != error(gf) {
		t.Errorf("Fault() = %v, want the panicked fault", c.Fault())
	}
	// Only the first fault is kept.
	faultOf(t, func() { arg(ctx, c, mem, "skillbox_log", 10, 10) })
	if c.Fault() != error(gf) {
		t.Errorf("Fault() = %v, want the first fault", c.Fault())
	}

	off := answer(ctx, c, mem, "skillbox_env", fail(StatusDenied, "no"))
	if got := mem.blocks[off]; !bytes.Equal(got, []byte("\x02no")) {
		t.Errorf("answer wrote %q", got)
	}
	c2 := NewCall(&Grant{})
	gf = faultOf(t, func() { answer(ctx, c2, &memBlocks{failAlloc: true}, "skillbox_fetch", ok(nil)) })
	if gf.Func != "skillbox_fetch" || !strings.Contains(gf.Reason, "cannot allocate the reply: guest memory exhausted") {
		t.Errorf("alloc fault %+v", gf)
	}
	if !errors.Is(c2.Fault(), ErrGuestFault) {
		t.Errorf("Fault() = %v", c2.Fault())
	}
}

func TestFirstBad(t *testing.T) {
	t.Parallel()
	a, b := fail(StatusInvalid, "a"), fail(StatusLimit, "b")
	ran := 0
	do := func() reply { ran++; return ok([]byte("done")) }
	for _, tt := range []struct {
		x, y *reply
		want string
		runs int
	}{{&a, &b, "a", 0}, {nil, &b, "b", 0}, {&a, nil, "a", 0}, {nil, nil, "done", 1}} {
		ran = 0
		if got := firstBad(tt.x, tt.y, do); string(got.payload) != tt.want || ran != tt.runs {
			t.Errorf("firstBad = %q (ran %d), want %q (ran %d)", got.payload, ran, tt.want, tt.runs)
		}
	}
}
