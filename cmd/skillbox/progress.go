package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/skillbox-dev/skillbox/runtime"
)

// progress shows a person at a terminal why a command waits: compiling a large module the first
// time takes seconds (an interpreter, a standard-Go skill), and a silent pause looks like a hang.
// A compilation that ends within showAfter (a load from the cache) shows nothing; a longer one
// shows a line, rewritten in place, with what compiles, for how long, and that it happens once;
// then a line that says it is done. Nothing goes to a pipe or a file (see isTerminal).
type progress struct {
	w         io.Writer
	showAfter time.Duration
	tick      time.Duration

	mu      sync.Mutex // one writer of w at a time
	running map[string]*watcher
}

// watcher is one compilation being shown: end tells it the compilation ended; it closes
// finished once its last line is written.
type watcher struct {
	end      chan runtime.CompileEvent
	finished chan struct{}
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, showAfter: 700 * time.Millisecond, tick: 250 * time.Millisecond,
		running: map[string]*watcher{}}
}

// event is a runtime.Config.OnCompile: a start starts a watcher; an end tells it, and returns
// once its last line is written, so that the line comes before what the command prints next.
func (p *progress) event(ev runtime.CompileEvent) {
	p.mu.Lock()
	w, ok := p.running[ev.What]
	switch {
	case !ev.Done && !ok:
		w = &watcher{end: make(chan runtime.CompileEvent, 1), finished: make(chan struct{})}
		p.running[ev.What] = w
		go p.watch(ev, w)
	case ev.Done && ok:
		delete(p.running, ev.What)
	default:
		ok = false // a second start of the same module (one line is enough), or an unknown end
	}
	p.mu.Unlock()
	if ev.Done && ok {
		w.end <- ev
		<-w.finished
	}
}

// watch shows ev's compilation until it ends.
func (p *progress) watch(ev runtime.CompileEvent, w *watcher) {
	defer close(w.finished)
	end := w.end
	start := time.Now()
	wait := time.NewTimer(p.showAfter)
	defer wait.Stop()
	select {
	case <-end:
		return // quick: nothing to show
	case <-wait.C:
	}
	size := ""
	if ev.Bytes > 0 {
		size = fmt.Sprintf(" (%.1f MB)", float64(ev.Bytes)/1e6)
	}
	t := time.NewTicker(p.tick)
	defer t.Stop()
	for {
		p.line(fmt.Sprintf("\r\033[Kskillbox: compiling %s%s, once: later runs load it from the cache ... %.0fs",
			ev.What, size, time.Since(start).Seconds()))
		select {
		case done := <-end:
			if done.Err != nil {
				p.line(fmt.Sprintf("\r\033[Kskillbox: compiling %s failed after %.1fs\n", ev.What, done.Took.Seconds()))
				return
			}
			p.line(fmt.Sprintf("\r\033[Kskillbox: compiled %s in %.1fs; cached for later runs\n", ev.What, done.Took.Seconds()))
			return
		case <-t.C:
		}
	}
}

func (p *progress) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, s)
}

// isTerminal reports whether w is a terminal, where progress may rewrite a line in place; a
// pipe, a file, a buffer or /dev/null gets none.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
