package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A tenant's quota across the nodes is one value in the quota bucket: the runs it holds now (a
// token each, with the node that holds it) and its bucket of runs per minute. Every take and
// release is a compare-and-set on that value, so however a tenant's runs are spread over the
// nodes, its concurrentRuns and runsPerMinute are never exceeded.

// quotaBucket names the quota bucket of a cluster named name.
func quotaBucket(name string) string { return strings.ToUpper(name) + "_QUOTA" }

// Bounds of the quota bucket.
const (
	// maxQuotaValue bounds one tenant's value: about 15,000 runs held at once.
	maxQuotaValue = 1 << 20
	// maxQuotaBytes bounds the bucket in all.
	maxQuotaBytes = 256 << 20
	// quotaTries bounds the compare-and-set tries of one take or release: each lost try means
	// another node's decision landed, so a take that loses this many is refused busy.
	quotaTries = 64
)

// ErrQuotaContended is a take or release that lost quotaTries compare-and-sets in a row.
var ErrQuotaContended = errors.New("cluster: the tenant's quota changed under every try")

// quotaState is a tenant's value in the quota bucket.
type quotaState struct {
	// Held are the runs in flight: token -> the node that holds it.
	Held map[string]string `json:"held,omitempty"`
	// Tokens is what the per-minute bucket held at At (unix nanoseconds); At 0 is a full bucket.
	Tokens float64 `json:"tokens"`
	At     int64   `json:"at"`
}

// quotaMine is what this node holds of each tenant's quota: a token it does not hold any
// more (its release was lost) is dropped from the value at its next take.
type quotaMine struct {
	mu   sync.Mutex
	held map[string]map[string]bool // tenant key -> tokens
}

func (m *quotaMine) set(key, token string, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held == nil {
		m.held = map[string]map[string]bool{}
	}
	if on {
		if m.held[key] == nil {
			m.held[key] = map[string]bool{}
		}
		m.held[key][token] = true
		return
	}
	delete(m.held[key], token)
	if len(m.held[key]) == 0 {
		delete(m.held, key)
	}
}

func (m *quotaMine) has(key, token string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held[key][token]
}

// TakeQuota counts one run of tenant, as token, against its quota: at most concurrentRuns held
// at once (0: no bound) and runsPerMinute started in a minute (0: no bound; a bucket of that
// many, refilled evenly). A run refused says why: refusal "concurrent" with the runs held, or
// "rate" with how long until a run may start. A run taken must be given back (ReleaseQuota).
// Runs held by a node that is no longer there (its presence expired) are not counted.
func (n *Node) TakeQuota(ctx context.Context, tenant, token string, concurrentRuns, runsPerMinute int, now time.Time) (refusal string, held int, wait time.Duration, err error) {
	key, ok := tokenKey(tenant, token)
	if !ok {
		return "", 0, 0, fmt.Errorf("cluster: quota: %q of tenant %q is not a token", token, tenant)
	}
	if concurrentRuns > 0 {
		n.mine.set(key, token, true) // before it lands: a take that lands is never pruned as lost
	}
	for range quotaTries {
		st, rev, err := n.readQuota(ctx, key)
		if err != nil {
			n.mine.set(key, token, false)
			return "", 0, 0, err
		}
		n.pruneMine(key, st)
		if concurrentRuns > 0 && len(st.Held) >= concurrentRuns {
			if err := n.pruneGone(ctx, st); err != nil {
				n.mine.set(key, token, false)
				return "", 0, 0, err
			}
			if len(st.Held) >= concurrentRuns {
				n.mine.set(key, token, false)
				return "concurrent", len(st.Held), 0, nil
			}
		}
		if runsPerMinute > 0 {
			refill(&st, runsPerMinute, now)
			if st.Tokens < 1 {
				n.mine.set(key, token, false)
				per := time.Minute / time.Duration(runsPerMinute)
				return "rate", len(st.Held), time.Duration((1 - st.Tokens) * float64(per)), nil
			}
			st.Tokens--
		}
		if concurrentRuns > 0 {
			if st.Held == nil {
				st.Held = map[string]string{}
			}
			st.Held[token] = n.cfg.NodeID
		}
		switch landed, err := n.writeQuota(ctx, key, st, rev); {
		case err != nil:
			n.mine.set(key, token, false)
			return "", 0, 0, err
		case landed:
			return "", len(st.Held), 0, nil
		}
	}
	n.mine.set(key, token, false)
	return "", 0, 0, ErrQuotaContended
}

// ReleaseQuota gives back token, taken by TakeQuota. One that cannot be given back now (NATS is
// away) is dropped at this node's next take of the tenant's quota, or once the node is gone.
func (n *Node) ReleaseQuota(ctx context.Context, tenant, token string) error {
	key, ok := tokenKey(tenant, token)
	if !ok {
		return nil
	}
	n.mine.set(key, token, false)
	for range quotaTries {
		st, rev, err := n.readQuota(ctx, key)
		if err != nil {
			return err
		}
		if _, ok := st.Held[token]; !ok {
			return nil
		}
		delete(st.Held, token)
		landed, err := n.writeQuota(ctx, key, st, rev)
		if err != nil || landed {
			return err
		}
	}
	return ErrQuotaContended
}

// tokenKey is the tenant's key in the quota bucket; false when tenant or token is no name.
func tokenKey(tenant, tok string) (string, bool) {
	t, ok := token(tenant)
	return t, ok && validName(tok)
}

// readQuota reads key's value and revision (0 and an empty value when there is none).
func (n *Node) readQuota(ctx context.Context, key string) (quotaState, uint64, error) {
	var st quotaState
	e, err := n.leaderGet(ctx, quotaBucket(n.cfg.Name), key)
	switch {
	case errors.Is(err, errKeyNotFound):
		return st, 0, nil
	case err != nil:
		return st, 0, fmt.Errorf("cluster: read the quota of %s: %w", key, err)
	}
	if err := json.Unmarshal(e.value, &st); err != nil {
		// Unreadable: start again rather than refuse the tenant for ever.
		n.cfg.Logger.Error("cluster: a tenant's quota value is unreadable; it starts afresh", "tenant", key, "err", err)
		return quotaState{}, e.rev, nil
	}
	return st, e.rev, nil
}

// writeQuota puts st at key if its revision is still rev; landed is false when another node's
// write came first.
func (n *Node) writeQuota(ctx context.Context, key string, st quotaState, rev uint64) (landed bool, _ error) {
	data, err := json.Marshal(st)
	if err != nil {
		return false, err
	}
	if len(data) > maxQuotaValue {
		return false, fmt.Errorf("cluster: the quota of %s holds more runs than the bucket's value can (%d bytes): lower its concurrentRuns", key, maxQuotaValue)
	}
	if rev == 0 {
		_, err = n.quota.Create(ctx, key, data)
	} else {
		_, err = n.quota.Update(ctx, key, data, rev)
	}
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrKeyExists), errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence:
		return false, nil
	}
	return false, fmt.Errorf("cluster: write the quota of %s: %w", key, err)
}

// pruneMine drops from st the tokens this node held and gave back without the value saying so.
func (n *Node) pruneMine(key string, st quotaState) {
	for tok, node := range st.Held {
		if node == n.cfg.NodeID && !n.mine.has(key, tok) {
			delete(st.Held, tok)
		}
	}
}

// pruneGone drops from st the tokens of nodes that are not there (their presence expired).
func (n *Node) pruneGone(ctx context.Context, st quotaState) error {
	there := map[string]bool{n.cfg.NodeID: true}
	keys, err := n.nodes.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("cluster: read which nodes are there: %w", err)
	}
	for k := range keys.Keys() {
		there[k] = true
	}
	for tok, node := range st.Held {
		if !there[node] {
			delete(st.Held, tok)
		}
	}
	return nil
}

// refill brings st's per-minute bucket to now.
func refill(st *quotaState, perMinute int, now time.Time) {
	if st.At == 0 {
		st.Tokens, st.At = float64(perMinute), now.UnixNano()
		return
	}
	if elapsed := now.UnixNano() - st.At; elapsed > 0 {
		st.Tokens = min(float64(perMinute), st.Tokens+float64(elapsed)*float64(perMinute)/float64(time.Minute))
		st.At = now.UnixNano()
	}
}
