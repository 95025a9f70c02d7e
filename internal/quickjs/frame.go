package quickjs

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// frameMark starts a request line on fd 1: the prelude's print of "\x01" + JSON. A skill can
// print such a line itself; it reaches the same Host under the same grants, so it gains nothing
// the SkillContext does not give it (and the reply it leaves in __reply is its own business).
const frameMark = 0x01

// request is one SkillContext operation as the prelude sends it (one JSON object a line).
type request struct {
	Op      string            `json:"op"`
	Name    string            `json:"name"`    // env
	Path    string            `json:"path"`    // readFile, writeFile
	Bytes   bool              `json:"bytes"`   // readFile: answer base64
	Data    *string           `json:"data"`    // writeFile: text
	Data64  *string           `json:"data64"`  // writeFile: bytes, base64
	URL     string            `json:"url"`     // fetch
	Method  string            `json:"method"`  // fetch
	Headers map[string]string `json:"headers"` // fetch
	Body    *string           `json:"body"`    // fetch
	Level   string            `json:"level"`   // log
	Message string            `json:"message"` // log
	Source  string            `json:"source"`  // log: "ctx" or "console"
}

// reply is the answer the prelude reads from globalThis.__reply.
type reply struct {
	Value  any    `json:"value"`
	Error  string `json:"error,omitempty"`
	Status string `json:"status,omitempty"`
}

type fetchReply struct {
	Status  int               `json:"status"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// errHostTimeout is a host operation that did not answer within its timeout.
var errHostTimeout = errors.New("the host did not answer in time")

// fdWrite replaces WASI's fd_write: fd 1 and 2 are gathered into lines for the run (see
// run.output); a request line on fd 1 is answered before fd_write returns. Other descriptors
// are EBADF: the guest has no files.
func fdWrite(ctx context.Context, m api.Module, stack []uint64) {
	fd, iovs, iovsLen, resultPtr := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	r, _ := ctx.Value(runKey{}).(*run)
	if r == nil || (fd != 1 && fd != 2) {
		stack[0] = 8 // EBADF
		return
	}
	mem := m.Memory()
	var total uint32
	for i := uint32(0); i < iovsLen; i++ {
		p, ok1 := mem.ReadUint32Le(iovs + i*8)
		n, ok2 := mem.ReadUint32Le(iovs + i*8 + 4)
		data, ok3 := mem.Read(p, n)
		if !ok1 || !ok2 || !ok3 {
			stack[0] = 21 // EFAULT
			return
		}
		r.write(ctx, int(fd), data)
		total += n
	}
	if !mem.WriteUint32Le(resultPtr, total) {
		stack[0] = 21
		return
	}
	stack[0] = 0
}

// write adds data to fd's pending line and handles every line it completes.
func (r *run) write(ctx context.Context, fd int, data []byte) {
	buf := &r.lines[fd-1]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		part := data
		if i >= 0 {
			part = data[:i]
		}
		if room := r.lim.maxLine() - len(buf.b); len(part) > room {
			// Keep the head (the mark says whether it is a request) and drop the rest: a request
			// is answered with an error, an output line is cut.
			buf.b = append(buf.b, part[:max(room, 0)]...)
			buf.over = true
		} else {
			buf.b = append(buf.b, part...)
		}
		if i < 0 {
			return
		}
		data = data[i+1:]
		r.line(ctx, fd, buf)
	}
}

// line handles the complete line in buf and empties it.
func (r *run) line(ctx context.Context, fd int, buf *lineBuf) {
	b, over := buf.b, buf.over
	buf.b, buf.over = buf.b[:0], false
	if fd == 1 && len(b) > 0 && b[0] == frameMark {
		var rep reply
		if over {
			rep = reply{Error: fmt.Sprintf("request larger than %d bytes", r.lim.maxLine()), Status: "limit"}
		} else {
			rep = r.serve(ctx, b[1:])
		}
		out, err := json.Marshal(rep)
		if err != nil {
			out = []byte(`{"error":"the host could not encode its answer","status":"failed"}`)
		}
		r.g.setReply(ctx, out)
		return
	}
	src, level := "stdout", "info"
	if fd == 2 {
		src, level = "stderr", "error"
	}
	r.output(src, level, string(b))
}

// output passes a line of plain output to the host, within Limits.MaxOutputBytes.
func (r *run) output(source, level, s string) {
	if r.outBytes+int64(len(s))+1 > r.lim.maxOutput() {
		r.dropped++
		return
	}
	r.outBytes += int64(len(s)) + 1
	r.host.Log(level, source, s)
}

// flush hands the unterminated output lines to the host at the end of a run.
func (r *run) flush() {
	for i := range r.lines {
		if len(r.lines[i].b) > 0 {
			src, level := "stdout", "info"
			if i == 1 {
				src, level = "stderr", "error"
			}
			r.output(src, level, string(r.lines[i].b))
			r.lines[i].b = nil
		}
	}
}

// serve decodes one request and answers it.
func (r *run) serve(ctx context.Context, line []byte) reply {
	r.calls++
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return reply{Error: "malformed request: " + err.Error(), Status: "invalid"}
	}
	v, err := r.callHost(ctx, req)
	if err == nil {
		return reply{Value: v}
	}
	if errors.Is(err, errHostTimeout) {
		return reply{Error: fmt.Sprintf("%s: %v (%s)", req.Op, err, r.lim.hostTimeout()), Status: "timeout"}
	}
	st, msg := hostfuncs.StatusOf(err)
	if st == hostfuncs.StatusNotFound && req.Op == "env" {
		return reply{} // null: an absent variable is not an error
	}
	return reply{Error: msg, Status: st.String()}
}

// callHost runs one operation on the host in its own goroutine, so that a host method that
// ignores its context cannot hold the guest past the operation's timeout.
func (r *run) callHost(ctx context.Context, req request) (any, error) {
	if req.Op == "log" {
		return nil, r.log(req) // never blocks: no goroutine
	}
	cctx, cancel := context.WithTimeout(ctx, r.lim.hostTimeout())
	defer cancel()
	type answer struct {
		v   any
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- answer{err: fmt.Errorf("host %s failed: %v", req.Op, p)}
			}
		}()
		v, err := r.op(cctx, req)
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-cctx.Done():
		return nil, errHostTimeout
	}
}

// op performs req on the host.
func (r *run) op(ctx context.Context, req request) (any, error) {
	switch req.Op {
	case "env":
		return r.host.Env(ctx, req.Name)
	case "readFile":
		b, err := r.host.ReadFile(ctx, req.Path)
		if err != nil {
			return nil, err
		}
		if req.Bytes {
			return base64.StdEncoding.EncodeToString(b), nil
		}
		return string(b), nil
	case "writeFile":
		var data []byte
		switch {
		case req.Data != nil:
			data = []byte(*req.Data)
		case req.Data64 != nil:
			d, err := base64.StdEncoding.DecodeString(*req.Data64)
			if err != nil {
				return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: "writeFile: data is not valid base64"}
			}
			data = d
		default:
			return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: "writeFile: data must be a string, an ArrayBuffer or a typed array"}
		}
		return nil, r.host.WriteFile(ctx, req.Path, data)
	case "fetch":
		fr := hostfuncs.FetchRequest{Method: req.Method, URL: req.URL, Headers: req.Headers}
		if req.Body != nil {
			fr.Body = []byte(*req.Body)
		}
		resp, err := r.host.Fetch(ctx, fr)
		if err != nil {
			return nil, err
		}
		return fetchReply{Status: resp.Status, URL: resp.URL, Headers: resp.Headers, Body: string(resp.Body)}, nil
	}
	return nil, &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid, Message: fmt.Sprintf("unknown operation %q", req.Op)}
}

// log passes ctx.log and console.* to the host.
func (r *run) log(req request) error {
	switch req.Level {
	case "":
		req.Level = "info"
	case "debug", "info", "warn", "error":
	default:
		return &hostfuncs.Refusal{Status: hostfuncs.StatusInvalid,
			Message: fmt.Sprintf("log level %q: use debug, info, warn or error", req.Level)}
	}
	src := "ctx"
	if req.Source == "console" {
		src = "console"
	}
	if !utf8.ValidString(req.Message) {
		req.Message = string(bytes.ToValidUTF8([]byte(req.Message), []byte("\uFFFD")))
	}
	r.host.Log(req.Level, src, req.Message)
	return nil
}
