package runtime

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
)

// TestOnCompile: Config.OnCompile hears a compilation start and end, with what it compiles, so
// that a face can show the wait; a run of a module already compiled tells it nothing.
func TestOnCompile(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []CompileEvent
	rt := newRuntime(t, Config{SkillDirs: []string{"../skills"}, Shared: newShared(t, SharedConfig{NoCache: true, OnCompile: func(ev CompileEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
	}})})
	for range 2 {
		if _, err := rt.Run(context.Background(), run.Request{Skill: "hello", Args: json.RawMessage(`{}`), Who: testAdmin}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 {
		t.Fatalf("events = %+v, want a start and an end", events)
	}
	start, end := events[0], events[1]
	if start.Done || start.Skill != "hello" || start.What != "skill hello" || start.Bytes <= 0 {
		t.Errorf("start = %+v", start)
	}
	if !end.Done || end.Err != nil || end.Took <= 0 || end.Skill != "hello" {
		t.Errorf("end = %+v", end)
	}
}
