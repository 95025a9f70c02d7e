package permit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/permit"
	"github.com/skillbox-dev/skillbox/permit/permittest"
)

func TestMemory(t *testing.T) {
	permittest.Run(t, func(*testing.T) permit.Store { return &permit.Memory{} })
}

// A Memory holds at most 4096 permits: the one that ends first goes first, and the ones that
// ended go when a new one comes.
func TestMemoryIsBounded(t *testing.T) {
	var m permit.Memory
	now := time.Unix(1_800_000_000, 0)
	for i := range 5000 {
		if err := m.AddPermit(t.Context(), permit.Permit{ID: fmt.Sprint(i), Skill: "s", Kind: "env", Target: fmt.Sprint(i),
			At: now, Until: now.Add(time.Duration(i+1) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	find := func(target string, at time.Time) bool {
		_, err := m.FindPermit(t.Context(), permit.Query{Skill: "s", Kind: "env", Target: target, At: at})
		return err == nil
	}
	if find("0", now) || !find("904", now) {
		t.Errorf("past 4096 permits, the one that ends first is not the one that went")
	}
	later := now.Add(4000 * time.Minute)
	_ = m.AddPermit(t.Context(), permit.Permit{ID: "late", Skill: "s", Kind: "env", Target: "late", At: later, Until: later.Add(time.Hour)})
	if find("3998", later.Add(-2*time.Minute)) || !find("4000", later) || !find("late", later) {
		t.Errorf("the permits that ended by a new one's start are still held, or one in force is not")
	}
}
