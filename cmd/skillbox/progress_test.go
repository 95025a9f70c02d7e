package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/runtime"
)

// TestProgress: a compilation that lasts shows what compiles, that it is once, and when it is
// done; a quick one (a cache load) shows nothing.
func TestProgress(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := newProgress(&out)
	p.showAfter, p.tick = 0, time.Millisecond
	// shown waits until the watcher has written a line holding want: the compilation it shows
	// has lasted past showAfter however slow the machine, before the test ends it. (The watcher
	// writes out under p.mu.)
	shown := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(hangTimeout); ; time.Sleep(time.Millisecond) {
			p.mu.Lock()
			got := out.String()
			p.mu.Unlock()
			if strings.Contains(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q shown within %v: %q", want, hangTimeout, got)
			}
		}
	}
	ev := runtime.CompileEvent{What: "skill big", Skill: "big", Bytes: 12_300_000}
	p.event(ev)
	p.event(ev) // asked for twice at once: still one line
	shown("compiling skill big")
	ev.Done, ev.Took = true, 3200*time.Millisecond
	p.event(ev) // returns once the last line is written
	got := out.String()
	// The seconds are the wall clock's since the line first showed: 0 on a quick machine.
	if !regexp.MustCompile(`\r\033\[Kskillbox: compiling skill big \(12\.3 MB\), once: later runs load it from the cache \.\.\. \d+s`).MatchString(got) {
		t.Errorf("progress lacks the compiling line:\n%q", got)
	}
	if want := "skillbox: compiled skill big in 3.2s; cached for later runs\n"; !strings.Contains(got, want) {
		t.Errorf("progress lacks %q:\n%q", want, got)
	}
	if !strings.HasSuffix(got, "cached for later runs\n") {
		t.Errorf("the done line is not the last:\n%q", got)
	}

	out.Reset()
	p.event(runtime.CompileEvent{What: "skill failing"})
	shown("compiling skill failing")
	p.event(runtime.CompileEvent{What: "skill failing", Done: true, Took: time.Second, Err: errors.New("no")})
	if !strings.HasSuffix(out.String(), "compiling skill failing failed after 1.0s\n") {
		t.Errorf("a failed compilation: %q", out.String())
	}

	out.Reset()
	p.showAfter = time.Hour
	p.event(runtime.CompileEvent{What: "skill quick"})
	p.event(runtime.CompileEvent{What: "skill quick", Done: true})
	p.event(runtime.CompileEvent{What: "skill never-started", Done: true})
	if out.Len() != 0 {
		t.Errorf("a quick compilation showed %q", out.String())
	}
}

// TestIsTerminal: progress goes to a terminal only: not a pipe, a file, a buffer or /dev/null
// (a character device, but not a terminal).
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, w := range map[string]io.Writer{"pipe": w, "/dev/null": null, "file": file, "buffer": &bytes.Buffer{}} {
		if isTerminal(w) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
