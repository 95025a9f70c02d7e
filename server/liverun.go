package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
)

// liveRun is one tracked run: its events so far, numbered from 1 in the order they happened,
// and the cancel of its context.
type liveRun struct {
	id     string
	caller string // who started it: its key's user, else the key's name (access.Principal.Caller)
	// visibleTo is the user alone who may see it, a run of a skill of their own ("" the tenant).
	visibleTo string
	async     bool
	cancel    context.CancelCauseFunc
	// placed is a run this node queued for the cluster and another node runs: it keeps no
	// events (the cluster has them) and is let go at until.
	placed bool
	until  time.Time

	mu      sync.Mutex
	events  []keptEvent
	cost    int64 // what events hold, roughly
	bounded int   // events kept that count against MaxEvents (all but status and result)
	dropped bool  // such events were dropped past the bounds
	shared  int   // events handed to the cluster (liveRuns.shareNew)
	done    bool  // the result event is in
	waiting bool  // the last status event was "waiting": the run waits for a person
	endedAt time.Time
	changed chan struct{} // closed, and replaced, at each new event: a wake-up for watchers

	keptCost int64 // cost once finished (liveRuns.mu)
}

// runOwner says whose a tracked run is: the name of the key that started it (who may cancel
// it), and the user alone who may see it, if any (see history.Record.VisibleTo).
type runOwner struct{ caller, visibleTo string }

// keptEvent is one event of a run. Events are kept as the runtime gave them and encoded when a
// watcher reads them: most runs are never watched, and a run must not pay to encode its logs.
type keptEvent struct {
	ev      run.Event
	dropped *droppedEvent // set for the marker of dropped log events
}

// droppedEvent marks where a run's events stopped being kept.
type droppedEvent struct {
	Type    string `json:"type"` // "dropped"
	RunID   string `json:"run_id"`
	Message string `json:"message"`
}

// name is the event's SSE name: its type.
func (k keptEvent) name() string {
	if k.dropped != nil {
		return k.dropped.Type
	}
	return k.ev.Type
}

// payload is what the event's data line encodes.
func (k keptEvent) payload() any {
	if k.dropped != nil {
		return k.dropped
	}
	return k.ev
}

// append keeps e within o's bounds and wakes the watchers; it reports whether e was the result
// (the run is over). The status events and the result are always kept; every other event (log,
// and whatever else the runtime sends, such as file) counts against MaxEvents and
// MaxEventBytes, and past either of them is dropped, once marked.
func (r *liveRun) append(e run.Event, o *LiveRunOptions, now func() time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	c := eventCost(e)
	if e.Type == "status" {
		r.waiting = e.Status == "waiting"
	}
	// A permission request and its answer are kept like the status they go with: a person
	// must see the request, and the runtime bounds how many a run makes.
	if e.Type != "status" && e.Type != "result" && e.Type != "permission_request" && e.Type != "permission_answer" {
		if r.dropped {
			return false
		}
		if r.bounded >= o.MaxEvents || r.cost+c > o.MaxEventBytes {
			r.dropped = true
			r.events = append(r.events, keptEvent{dropped: &droppedEvent{Type: "dropped", RunID: r.id, Message: fmt.Sprintf(
				"this run's further events other than its result are not kept (a run keeps at most %d of them, in %d bytes); the result event carries the logs the runtime kept",
				o.MaxEvents, o.MaxEventBytes)}})
			r.cost += 256
			r.wake()
			return false
		}
		r.bounded++
	}
	r.events = append(r.events, keptEvent{ev: e})
	r.cost += c
	if e.Type == "result" {
		r.done, r.endedAt = true, now()
	}
	r.wake()
	return r.done
}

// wake tells the watchers there is something new. r.mu is held.
func (r *liveRun) wake() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// since returns the events after the first `after` ones, whether the run is over, and a channel
// closed at the next event.
func (r *liveRun) since(after int) ([]keptEvent, bool, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var evs []keptEvent
	if after < len(r.events) {
		evs = r.events[after:len(r.events):len(r.events)] // events are only appended: a view is safe
	}
	return evs, r.done, r.changed
}

// isDone reports whether the run's result is in.
func (r *liveRun) isDone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// waitingStatus is where a run stands while it waits for a person's answer: a live status, never
// a record's.
const waitingStatus = store.Status("waiting")

// status is where the run stands, in the run history's words: running (or waiting, for a
// person's answer to a permission request) until its result is in, then succeeded or failed.
func (r *liveRun) status() store.Status {
	if r.placed {
		return placedStatus
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done && r.waiting {
		return waitingStatus
	}
	if !r.done {
		return store.StatusRunning
	}
	if res := r.events[len(r.events)-1].ev.Result; res != nil {
		return statusOf(res)
	}
	return store.StatusFailed
}

// canceledFor reports whether the run ended canceled, for cause: a cancel that reached it
// twice (kept for it while it was queued, and asked of the node that held it) ended it once.
func (r *liveRun) canceledFor(cause string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		return false
	}
	res := r.events[len(r.events)-1].ev.Result
	return res != nil && res.Error != nil && res.Error.Kind == run.KindCanceled && strings.Contains(res.Error.Message, cause)
}

// endedBefore reports whether the run finished before t.
func (r *liveRun) endedBefore(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done && r.endedAt.Before(t)
}

// cancelFor cancels the run with cause, unless it is over already (false). The first cause
// wins: a run canceled twice says who asked first.
func (r *liveRun) cancelFor(cause error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	r.cancel(cause)
	return true
}

// eventCost estimates what e holds in memory: its texts plus a fixed overhead, like the
// runtime's estimate of a record.
func eventCost(e run.Event) int64 {
	n := int64(96)
	if e.Log != nil {
		n += int64(len(e.Log.Message) + len(e.Log.Source) + len(e.Log.Level))
	}
	if res := e.Result; res != nil {
		n += 512 + int64(len(res.Result))
		if res.Error != nil {
			n += int64(len(res.Error.Message))
		}
		for _, l := range res.Logs {
			n += int64(len(l.Message)) + 64
		}
	}
	return n
}
