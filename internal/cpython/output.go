package cpython

import (
	"bytes"
	"strings"
)

// logOutput gathers what a skill writes to fd 1 or fd 2 (print, tracebacks) into lines and hands
// each to the host's Log, within the run's output budget (Limits.MaxOutputBytes, shared by both
// descriptors); lines past it are counted as dropped.
type logOutput struct {
	r              *run
	source, level  string
	line           []byte
	over, isStderr bool
}

func (o *logOutput) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if room := int(o.r.lim.maxOutput()) - len(o.line); len(part) > room {
			o.line = append(o.line, part[:max(room, 0)]...)
			o.over = true
		} else {
			o.line = append(o.line, part...)
		}
		if i < 0 {
			break
		}
		p = p[i+1:]
		o.emit()
	}
	return n, nil
}

// emit passes the pending line to the host, or counts it as dropped.
func (o *logOutput) emit() {
	s := string(o.line)
	o.line, o.over = o.line[:0], false
	if o.isStderr {
		o.r.noteStderr(s)
	}
	if o.r.outBytes+int64(len(s))+1 > o.r.lim.maxOutput() {
		o.r.dropped++
		return
	}
	o.r.outBytes += int64(len(s)) + 1
	o.r.broker.Host.Log(o.level, o.source, s)
}

// flush hands an unterminated last line to the host at the end of a run.
func (o *logOutput) flush() {
	if len(o.line) > 0 {
		o.emit()
	}
}

// capturedOutput keeps what a program writes to one descriptor, up to max bytes, and counts the
// rest. On stderr it also watches for the interpreter's fatal errors (see run.noteStderr).
type capturedOutput struct {
	r       *run
	buf     bytes.Buffer
	max     int64
	dropped int64
	stderr  bool
	line    []byte
}

func (o *capturedOutput) Write(p []byte) (int, error) {
	if room := o.max - int64(o.buf.Len()); room < int64(len(p)) {
		o.buf.Write(p[:max(room, 0)])
		o.dropped += int64(len(p)) - max(room, 0)
	} else {
		o.buf.Write(p)
	}
	if o.stderr {
		// Only the head of each line matters (a fatal error's first words).
		for _, part := range bytes.SplitAfter(p, []byte("\n")) {
			if len(o.line) < 256 {
				o.line = append(o.line, part[:min(len(part), 256-len(o.line))]...)
			}
			if bytes.HasSuffix(part, []byte("\n")) {
				o.r.noteStderr(strings.TrimSuffix(string(o.line), "\n"))
				o.line = o.line[:0]
			}
		}
	}
	return len(p), nil
}

// noteStderr remembers the first "Fatal Python error" line the interpreter prints before it
// aborts, or the "libjpeg: " line Pillow's JPEG codec prints before it traps on a fatal libjpeg
// error (build.sh, 4c): the run's error names it, and one about memory makes the abort a
// memory limit (libjpeg's "Insufficient memory").
func (r *run) noteStderr(line string) {
	if r.fatal == "" && (strings.HasPrefix(line, "Fatal Python error") || strings.HasPrefix(line, "libjpeg: ")) {
		r.fatal = line
	}
}
