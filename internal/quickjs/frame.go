package quickjs

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// frameMark starts a request line on fd 1: the prelude's print of "\x01" + JSON. A skill can
// print such a line itself; it reaches the same Host under the same grants, so it gains nothing
// the SkillContext does not give it (and the reply it leaves in __reply is its own business).
const frameMark = 0x01

// outcomeMark starts the driver's outcome line on fd 1: "\x03" + {ok, result, ...}.
const outcomeMark = 0x03

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
	if r.preparing { // a top level that writes must do so in each run: Prepare ends there
		r.wrote = true
		panic(ErrImpure)
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
		out := broker.TooLarge(r.lim.maxLine())
		if !over {
			out = r.broker.ServeJSON(ctx, b[1:])
		}
		r.g.setReply(ctx, out)
		return
	}
	if !r.prog && fd == 1 && len(b) > 0 && b[0] == outcomeMark {
		// The first wins: a skill that prints such a line itself only sets its own result.
		if r.outcome == nil && !r.outcomeOver {
			r.outcome, r.outcomeOver = append([]byte{}, b[1:]...), over
		}
		return
	}
	if r.prog && fd == 1 && len(b) > 0 && b[0] == exitMark && r.exit == nil {
		if code, err := strconv.Atoi(string(b[1:])); err == nil && !over {
			// Unwinds the guest from inside its write, as proc_exit does: nothing of the
			// program runs after it (program recovers it).
			r.exit = &code
			panic(sys.NewExitError(uint32(code)))
		}
		return
	}
	if r.prog && fd == 1 && len(b) > 0 && b[0] == writeMark {
		var w struct {
			FD   int    `json:"fd"`
			Data string `json:"data"`
		}
		if !over && json.Unmarshal(b[1:], &w) == nil && (w.FD == 1 || w.FD == 2) {
			r.std[w.FD-1].write(r.lim.maxOutput(), w.Data)
		}
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
	if r.prog { // a program's output is its result, not the log
		i := 0
		if source == "stderr" {
			i = 1
		}
		r.std[i].write(r.lim.maxOutput(), s+"\n")
		return
	}
	if r.outBytes+int64(len(s))+1 > r.lim.maxOutput() {
		r.dropped++
		return
	}
	r.outBytes += int64(len(s)) + 1
	r.broker.Host.Log(level, source, s)
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
