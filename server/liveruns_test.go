package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
)

// The registry's bounds, with its clock in hand: MaxWatched synchronous runs are kept (one more
// runs untracked), and finished runs go past MaxFinishedBytes, MaxFinished or Keep, oldest first.
func TestLiveRunsBounds(t *testing.T) {
	t.Parallel()
	// play tracks one run of reg through its events; it returns the run's tracking, finished
	// unless open.
	play := func(reg *liveRuns, id string, async, open bool, logs ...string) *tracking {
		req := run.Request{Who: access.Local("test")}
		tr := reg.track(context.Background(), &req, runOwner{caller: "k"}, async)
		req.OnEvent(run.Event{Type: "status", Status: "started", RunID: id})
		for _, l := range logs {
			req.OnEvent(run.Event{Type: "log", RunID: id, Log: &run.LogEntry{Message: l}})
		}
		if !open {
			req.OnEvent(run.Event{Type: "result", RunID: id, Result: &run.Result{RunID: id, Success: true}})
			tr.end(&run.Result{RunID: id})
		}
		return tr
	}
	now := time.Unix(1000, 0)
	newReg := func(o LiveRunOptions) *liveRuns {
		reg, err := newLiveRuns(o)
		if err != nil {
			t.Fatal(err)
		}
		reg.now = func() time.Time { return now }
		return reg
	}
	kept := func(reg *liveRuns) string {
		var ids []string
		for i := range 6 {
			if reg.get(fmt.Sprint("r", i)) != nil {
				ids = append(ids, fmt.Sprint("r", i))
			}
		}
		return strings.Join(ids, ",")
	}

	reg := newReg(LiveRunOptions{MaxWatched: 1})
	first := play(reg, "r0", false, true)
	second := play(reg, "r1", false, true)
	if first.run == nil || second.run != nil || kept(reg) != "r0" {
		t.Errorf("MaxWatched 1: kept %q", kept(reg))
	}
	second.end(&run.Result{}) // an untracked run ends quietly
	first.end(&run.Result{RunID: "r0"})
	if !first.run.isDone() || first.run.status() != "failed" { // its result stood in for the missing event
		t.Errorf("a run that returned without its result event: done %v, %s", first.run.isDone(), first.run.status())
	}
	play(reg, "r2", false, true) // the place came back
	if kept(reg) != "r0,r2" {
		t.Errorf("after r0 ended: kept %q", kept(reg))
	}

	// A finished run with one log of 1000 bytes holds about 1800: status 96, log 1096, result 608.
	big := strings.Repeat("x", 1000)
	reg = newReg(LiveRunOptions{MaxFinishedBytes: 4000, MaxFinished: 2, Keep: time.Minute})
	play(reg, "r0", true, false, big)
	play(reg, "r1", true, false, big)
	if kept(reg) != "r0,r1" {
		t.Errorf("kept %q", kept(reg))
	}
	play(reg, "r2", true, false, big) // 5400 bytes: r0 goes
	if kept(reg) != "r1,r2" {
		t.Errorf("MaxFinishedBytes: kept %q", kept(reg))
	}
	play(reg, "r3", true, false) // 4300 bytes: r1 goes
	play(reg, "r4", true, false) // 3 runs, 3200 bytes: r2 goes
	if kept(reg) != "r3,r4" {
		t.Errorf("MaxFinished: kept %q", kept(reg))
	}
	now = now.Add(time.Minute + time.Millisecond)
	play(reg, "r5", true, false)
	if kept(reg) != "r5" {
		t.Errorf("Keep: kept %q", kept(reg))
	}
	if _, err := newLiveRuns(LiveRunOptions{Keep: -1}); err == nil {
		t.Error("a negative bound was accepted")
	}
}
