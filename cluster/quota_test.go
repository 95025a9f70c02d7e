package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/runtime"
)

// A Node is what a runtime shares its quota through.
var _ runtime.SharedQuota = (*Node)(nil)

// Takes raced from two nodes never exceed concurrentRuns; a release frees a place on any node;
// a token lost by its node is dropped at that node's next take; the runs of a node that is gone
// stop counting; another tenant is apart.
func TestAQuotaHoldsAcrossNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	now := time.Now()
	const limit = 5
	var took atomic.Int32
	var mu sync.Mutex
	tokens := map[string]*Node{}
	var wg sync.WaitGroup
	for i := range 12 {
		n := []*Node{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := fmt.Sprintf("t%d", i)
			refusal, _, _, err := n.TakeQuota(ctx, "acme", tok, limit, 0, now)
			if err != nil {
				t.Error(err)
				return
			}
			if refusal == "" {
				took.Add(1)
				mu.Lock()
				tokens[tok] = n
				mu.Unlock()
			} else if refusal != "concurrent" {
				t.Errorf("refused for %q", refusal)
			}
		}()
	}
	wg.Wait()
	if took.Load() != limit {
		t.Fatalf("%d of 12 raced takes landed, limit %d", took.Load(), limit)
	}
	if refusal, held, _, _ := b.TakeQuota(ctx, "acme", "more", limit, 0, now); refusal != "concurrent" || held != limit {
		t.Fatalf("a take past the limit: %q, %d held", refusal, held)
	}
	if refusal, _, _, _ := b.TakeQuota(ctx, "other", "x", 1, 0, now); refusal != "" {
		t.Fatalf("another tenant's take: %q", refusal)
	}
	for tok, n := range tokens { // one given back on the node that took it
		if err := n.ReleaseQuota(ctx, "acme", tok); err != nil {
			t.Fatal(err)
		}
		delete(tokens, tok)
		break
	}
	if refusal, _, _, _ := a.TakeQuota(ctx, "acme", "again", limit, 0, now); refusal != "" {
		t.Fatalf("a take after a release: %q", refusal)
	}
	// a forgets its tokens as a lost release would leave them: its next take drops them.
	a.mine = quotaMine{}
	if refusal, held, _, _ := a.TakeQuota(ctx, "acme", "after-loss", limit, 0, now); refusal != "" || held >= limit {
		t.Fatalf("a take after a's releases were lost: %q, %d held", refusal, held)
	}
	// b's runs count until b is gone, then not.
	for i, n := range []*Node{b, b, a} {
		if refusal, _, _, err := n.TakeQuota(ctx, "gone", fmt.Sprintf("g%d", i), 3, 0, now); refusal != "" || err != nil {
			t.Fatalf("take %d: %q %v", i, refusal, err)
		}
	}
	if refusal, _, _, _ := a.TakeQuota(ctx, "gone", "full", 3, 0, now); refusal != "concurrent" {
		t.Fatalf("b's runs do not count: %q", refusal)
	}
	b.Close()
	if refusal, held, _, _ := a.TakeQuota(ctx, "gone", "full", 3, 0, now); refusal != "" || held != 2 {
		t.Fatalf("the runs of a node that is gone still count: %q, %d held", refusal, held)
	}
}

// runsPerMinute is one bucket for all nodes: a burst of that many, then one each
// minute/runsPerMinute, whichever node asks.
func TestARateHoldsAcrossNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	now := time.Now()
	for i, n := range []*Node{a, b, a} {
		if refusal, _, _, err := n.TakeQuota(ctx, "acme", fmt.Sprintf("r%d", i), 0, 3, now); err != nil || refusal != "" {
			t.Fatalf("take %d: %q %v", i, refusal, err)
		}
	}
	refusal, _, wait, err := b.TakeQuota(ctx, "acme", "r3", 0, 3, now)
	if err != nil || refusal != "rate" || wait <= 0 || wait > 20*time.Second {
		t.Fatalf("the fourth run in a minute of 3: %q, wait %v, %v", refusal, wait, err)
	}
	if refusal, _, _, err := a.TakeQuota(ctx, "acme", "r4", 0, 3, now.Add(20*time.Second)); err != nil || refusal != "" {
		t.Fatalf("a run 20 s later: %q %v", refusal, err)
	}
	if refusal, _, _, _ := b.TakeQuota(ctx, "acme", "r5", 0, 3, now.Add(20*time.Second)); refusal != "rate" {
		t.Fatalf("a second run 20 s later: %q", refusal)
	}
}
