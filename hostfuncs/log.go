package hostfuncs

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/run"
)

// Log levels of skillbox_log, as the guest passes them.
const (
	LevelDebug = 0
	LevelInfo  = 1
	LevelWarn  = 2
	LevelError = 3
)

// LevelName maps a guest level to its name; unknown levels are "info" (docs/abi.md).
func LevelName(level int32) string {
	switch level {
	case LevelDebug:
		return "debug"
	case LevelWarn:
		return "warn"
	case LevelError:
		return "error"
	}
	return "info"
}

// LogEntryCost is what an entry costs the log budget beyond its text: without it, empty messages
// would be free, and a guest could keep millions of them.
const LogEntryCost = 64

// Log records one message from source at level, escaped, within the run's log budget. Past the
// budget the message is counted as dropped. The runtime uses it for stdout, stderr and Extism's own
// log calls, so all of them share one budget. Each entry costs its text plus LogEntryCost bytes.
func (c *Call) Log(level, source, msg string) {
	msg = escapeControl(msg)
	c.mu.Lock()
	size := int64(len(msg)) + LogEntryCost
	if c.logSize+size > c.Grant.Limits.MaxLogBytes {
		c.dropped++
		c.mu.Unlock()
		return
	}
	c.logSize += size
	e := run.LogEntry{Time: time.Now().UTC(), Level: level, Source: source, Message: msg}
	c.logs = append(c.logs, e)
	onLog := c.OnLog
	c.mu.Unlock()
	if onLog != nil {
		onLog(e)
	}
}

// logFull reports whether not even an empty entry fits in the budget any more.
func (c *Call) logFull() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logSize+LogEntryCost > c.Grant.Limits.MaxLogBytes
}

// DropLog counts a log entry dropped before it was read (a message over the whole budget).
func (c *Call) DropLog() {
	c.mu.Lock()
	c.dropped++
	c.mu.Unlock()
}

// escapeControl makes a guest's text safe to print to a terminal or a log file: control
// characters (but tab) become \n, \r or \xNN, invalid UTF-8 becomes U+FFFD.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\t') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '\t' || !unicode.IsControl(r):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// LineWriter turns a stream (a guest's stdout or stderr) into log entries, one per line, sharing
// the run's log budget. A line longer than the budget is cut by it like any other.
type LineWriter struct {
	Call   *Call
	Source string
	Level  string
	buf    []byte
}

func (w *LineWriter) Write(p []byte) (int, error) {
	// Once the budget is spent, count the write as one drop and keep nothing: splitting a flood
	// into lines only to drop each would let one write keep the host busy past the deadline.
	if w.Call.logFull() {
		w.buf = nil
		w.Call.DropLog()
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	start := 0
	for {
		i := bytes.IndexByte(w.buf[start:], '\n')
		if i < 0 {
			break
		}
		w.Call.Log(w.Level, w.Source, string(w.buf[start:start+i]))
		start += i + 1
		if w.Call.logFull() && start < len(w.buf) {
			w.Call.DropLog() // the rest of this write, as one drop
			start = len(w.buf)
			break
		}
	}
	w.buf = append(w.buf[:0], w.buf[start:]...)
	// A guest that never writes a newline must not grow the buffer without bound.
	if int64(len(w.buf)) > w.Call.Grant.Limits.MaxLogBytes {
		w.Flush()
	}
	return len(p), nil
}

// Flush logs what is left without a trailing newline.
func (w *LineWriter) Flush() {
	if len(w.buf) > 0 {
		w.Call.Log(w.Level, w.Source, string(w.buf))
		w.buf = nil
	}
}
