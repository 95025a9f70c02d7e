package hostfuncs

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/run"
)

func TestLevelName(t *testing.T) {
	t.Parallel()
	for level, want := range map[int32]string{
		LevelDebug: "debug", LevelInfo: "info", LevelWarn: "warn", LevelError: "error",
		-1: "info", 4: "info", 100: "info", math.MaxInt32: "info", math.MinInt32: "info",
	} {
		if got := LevelName(level); got != want {
			t.Errorf("LevelName(%d) = %q, want %q", level, got, want)
		}
	}
}

func TestEscapeControl(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain text", "plain text"},
		{"tab\tkept", "tab\tkept"},
		{"line\nbreak", `line\nbreak`},
		{"carriage\rreturn", `carriage\rreturn`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"nul\x00byte", `nul\x00byte`},
		{"bell\a del\x7f", `bell\x07 del\x7f`},
		{"c1 \u0085 \u009b", `c1 \x85 \x9b`},
		{"invalid \xff\xfe utf8", "invalid \uFFFD utf8"},
		{"truncated \xe2\x82", "truncated \uFFFD"},
		{"replacement \uFFFD kept", "replacement \uFFFD kept"},
		{"unicode ✓ 日本 🎉", "unicode ✓ 日本 🎉"},
		{"mixed \xff\n\t", "mixed \uFFFD\\n\t"},
	}
	for _, tt := range tests {
		if got := escapeControl(tt.in); got != tt.want {
			t.Errorf("escapeControl(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzEscapeControl(f *testing.F) {
	for _, s := range []string{"", "a\tb", "\n\r\x1b\x00\x7f", "\u0085\u009f", "\xff\xfe", "✓\xe2\x82", "\uFFFD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := escapeControl(in)
		if !utf8.ValidString(out) {
			t.Fatalf("escapeControl(%q) = %q, not valid UTF-8", in, out)
		}
		for _, r := range out {
			if r != '\t' && unicode.IsControl(r) {
				t.Fatalf("escapeControl(%q) = %q keeps control character %U", in, out, r)
			}
		}
		if again := escapeControl(out); again != out {
			t.Fatalf("escapeControl is not idempotent: %q -> %q -> %q", in, out, again)
		}
		clean := utf8.ValidString(in) && !strings.ContainsFunc(in, func(r rune) bool { return r != '\t' && unicode.IsControl(r) })
		if clean && out != in {
			t.Fatalf("escapeControl changed clean text %q to %q", in, out)
		}
	})
}

func logCall(max int64) *Call { return NewCall(&Grant{Limits: Limits{MaxLogBytes: max}}) }

func TestLogEntries(t *testing.T) {
	t.Parallel()
	c := logCall(1 << 10)
	before := time.Now()
	c.Log("warn", "stderr", "disk \x1b[2J full\n")
	c.Log(LevelName(LevelDebug), "", "tab\there")
	c.Log(LevelName(7), "host", "bad \xff byte")
	logs, dropped := c.Logs()
	if dropped != 0 {
		t.Errorf("dropped = %d, want 0", dropped)
	}
	want := []run.LogEntry{
		{Level: "warn", Source: "stderr", Message: `disk \x1b[2J full\n`},
		{Level: "debug", Source: "", Message: "tab\there"},
		{Level: "info", Source: "host", Message: "bad \uFFFD byte"},
	}
	if len(logs) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(logs), len(want), logs)
	}
	for i, e := range logs {
		if e.Level != want[i].Level || e.Source != want[i].Source || e.Message != want[i].Message {
			t.Errorf("entry %d = %+v, want %+v", i, e, want[i])
		}
		if e.Time.Before(before.Add(-time.Second)) || e.Time.Location() != time.UTC {
			t.Errorf("entry %d time %v: want a current UTC time", i, e.Time)
		}
	}
	// Logs returns a copy.
	logs[0].Message = "changed"
	if again, _ := c.Logs(); again[0].Message == "changed" {
		t.Error("Logs returns the call's own slice")
	}
}

func TestLogBudget(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var streamed []string
	// Each entry costs its escaped text plus LogEntryCost.
	c := logCall(2*LogEntryCost + 8)
	c.OnLog = func(e run.LogEntry) {
		mu.Lock()
		streamed = append(streamed, e.Message)
		mu.Unlock()
	}
	c.Log("info", "", "12345")  // 5+64 = 69: kept
	c.Log("info", "", "123456") // 69+70 = 139 > 136: dropped
	c.Log("info", "", "\n")     // escaped to 2 bytes: 69+66 = 135, kept
	c.Log("info", "", "")       // an empty entry is not free: 135+64 > 136, dropped
	c.Log("info", "", "x")      // dropped
	logs, dropped := c.Logs()
	var kept []string
	for _, e := range logs {
		kept = append(kept, e.Message)
	}
	wantKept := []string{"12345", `\n`}
	if fmt.Sprint(kept) != fmt.Sprint(wantKept) || len(kept) != len(wantKept) {
		t.Errorf("kept %q, want %q", kept, wantKept)
	}
	if dropped != 3 {
		t.Errorf("dropped = %d, want 3", dropped)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(streamed) != fmt.Sprint(wantKept) || len(streamed) != len(wantKept) {
		t.Errorf("OnLog saw %q, want only the kept entries %q", streamed, wantKept)
	}
}

// Empty messages cost the budget too, or a guest could keep millions of them.
func TestEmptyLogEntriesAreBounded(t *testing.T) {
	t.Parallel()
	c := logCall(10 * LogEntryCost)
	for range 1000 {
		c.Log("info", "", "")
	}
	if logs, dropped := c.Logs(); len(logs) != 10 || dropped != 990 {
		t.Errorf("kept %d, dropped %d; want 10 and 990", len(logs), dropped)
	}
}

func TestLogZeroBudgetDropsEverything(t *testing.T) {
	t.Parallel()
	c := logCall(0)
	called := false
	c.OnLog = func(run.LogEntry) { called = true }
	c.Log("info", "", "x")
	c.DropLog()
	if logs, dropped := c.Logs(); len(logs) != 0 || dropped != 2 {
		t.Errorf("Logs() = %d entries, %d dropped; want 0, 2", len(logs), dropped)
	}
	if called {
		t.Error("OnLog called for a dropped entry")
	}
}

func TestLogConcurrent(t *testing.T) {
	t.Parallel()
	c := logCall(1000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &LineWriter{Call: c, Source: fmt.Sprint("g", g), Level: "info"}
			for range 50 {
				c.Log("info", "", "0123456789")
				_, _ = w.Write([]byte("abcd\n"))
			}
			w.Flush()
		}()
	}
	wg.Wait()
	logs, dropped := c.Logs()
	var size int
	for _, e := range logs {
		size += len(e.Message) + LogEntryCost
	}
	if size > 1000 {
		t.Errorf("kept %d bytes, over the budget of 1000", size)
	}
	if len(logs)+dropped != 8*100 {
		t.Errorf("kept %d + dropped %d != 800 entries written", len(logs), dropped)
	}
}

func messages(c *Call) []string {
	logs, _ := c.Logs()
	out := make([]string, len(logs))
	for i, e := range logs {
		out[i] = e.Message
	}
	return out
}

func TestLineWriter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		writes []string
		flush  bool
		want   []string
	}{
		{"one line", []string{"hello\n"}, false, []string{"hello"}},
		{"several lines in one write", []string{"a\nb\nc\n"}, false, []string{"a", "b", "c"}},
		{"line across writes", []string{"he", "ll", "o\nwor", "ld\n"}, false, []string{"hello", "world"}},
		{"partial line waits for flush", []string{"a\nb"}, false, []string{"a"}},
		{"flush logs the partial line", []string{"a\nb"}, true, []string{"a", "b"}},
		{"flush with nothing left", []string{"a\n"}, true, []string{"a"}},
		{"empty lines kept", []string{"\n\n"}, false, []string{"", ""}},
		{"crlf escaped", []string{"dos\r\n"}, false, []string{`dos\r`}},
		{"escapes", []string{"\x1b[1mbold\t\xff\n"}, false, []string{"\\x1b[1mbold\t\uFFFD"}},
		{"empty write", []string{""}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := logCall(1 << 10)
			w := &LineWriter{Call: c, Source: "stdout", Level: "info"}
			for _, s := range tt.writes {
				n, err := w.Write([]byte(s))
				if n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", s, n, err, len(s))
				}
			}
			if tt.flush {
				w.Flush()
			}
			got := messages(c)
			if len(got) != len(tt.want) || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("logged %q, want %q", got, tt.want)
			}
			logs, _ := c.Logs()
			for _, e := range logs {
				if e.Source != "stdout" || e.Level != "info" {
					t.Errorf("entry %+v: want source stdout, level info", e)
				}
			}
		})
	}
}

func TestLineWriterBoundedWithoutNewline(t *testing.T) {
	t.Parallel()
	const budget = 16
	c := logCall(budget)
	w := &LineWriter{Call: c, Source: "stdout", Level: "info"}
	chunk := []byte("abc")
	for range 10000 {
		if n, err := w.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if len(w.buf) > budget {
			t.Fatalf("buffer holds %d bytes, more than maxLogBytes (%d)", len(w.buf), budget)
		}
	}
	// Every flushed run is over the budget, so it is dropped whole: nothing kept, all counted.
	logs, dropped := c.Logs()
	if len(logs) != 0 || dropped == 0 {
		t.Errorf("Logs() = %q, %d dropped; want none kept and some dropped", messages(c), dropped)
	}

	// One huge write without a newline is not kept in the buffer either.
	w2 := &LineWriter{Call: logCall(budget), Source: "stdout", Level: "info"}
	if _, err := w2.Write(bytes.Repeat([]byte("z"), 1<<20)); err != nil {
		t.Fatal(err)
	}
	if len(w2.buf) != 0 {
		t.Errorf("buffer holds %d bytes after a 1 MiB write without newline", len(w2.buf))
	}
}

func TestLineWriterSharesBudget(t *testing.T) {
	t.Parallel()
	c := logCall(8 + 2*LogEntryCost)
	out := &LineWriter{Call: c, Source: "stdout", Level: "info"}
	errw := &LineWriter{Call: c, Source: "stderr", Level: "warn"}
	_, _ = out.Write([]byte("aaaa\n"))  // 4
	_, _ = errw.Write([]byte("bbbb\n")) // 8
	_, _ = out.Write([]byte("c\n"))     // dropped
	c.Log("info", "", "d")              // dropped
	if got := messages(c); fmt.Sprint(got) != "[aaaa bbbb]" {
		t.Errorf("kept %q, want [aaaa bbbb]", got)
	}
	if _, dropped := c.Logs(); dropped != 2 {
		t.Errorf("dropped = %d, want 2", dropped)
	}
}

// A guest can hand its stdout one large write of many short lines (WASI fd_write of a big
// buffer). Splitting it must not cost a step per line past the budget: lines are kept until the
// budget is spent, and the rest of the write is one drop, not 199,000 (which is what this checks,
// rather than a time that a loaded machine could exceed).
func TestLineWriterManyLinesInOneWrite(t *testing.T) {
	t.Parallel()
	const lines = 200_000
	c := logCall(64 << 10)
	w := &LineWriter{Call: c, Source: "stdout", Level: "info"}
	data := bytes.Repeat([]byte("x\n"), lines)
	_, _ = w.Write(data)
	logs, dropped := c.Logs()
	if want := (64 << 10) / (1 + LogEntryCost); len(logs) != want || dropped != 1 {
		t.Errorf("kept %d, dropped %d; want %d and 1", len(logs), dropped, want)
	}
	if len(w.buf) != 0 {
		t.Errorf("%d bytes of the dropped rest still held", len(w.buf))
	}
}
