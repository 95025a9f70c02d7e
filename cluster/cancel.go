package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// cancelWait bounds how long a cancel waits for the node that holds its run to answer: a run
// no node answers for has ended, or its node has gone.
const cancelWait = 2 * time.Second

// maxCause bounds the cause a cancel carries, as a node reads it.
const maxCause = 1024

// cancelSubject is the subject that asks for run's cancel.
func (n *Node) cancelSubject(tenant, run string) (string, bool) {
	key, ok := runKey(tenant, run)
	return n.cfg.Name + ".cancel." + key, ok
}

// CancelRun asks every node to cancel run for cause, and returns the answer of the node that
// holds it (what the handler of ServeCancels replied); held is false when none answered within
// cancelWait, or run is no run id. Cancel is a request on a core subject: it reaches the nodes
// connected now, which are the ones that can hold a run in flight. Before it asks, it keeps
// the cancel in the cancels bucket, for a run that waits in the queue: the node that takes
// it holds it before it reads the bucket (QueuedCancel), so one of the two always sees the
// cancel.
func (n *Node) CancelRun(ctx context.Context, tenant, run, cause string) (answer string, held bool, err error) {
	subj, ok := n.cancelSubject(tenant, run)
	if !ok {
		return "", false, nil
	}
	cause = strings.ToValidUTF8(cause[:min(len(cause), maxCause)], "")
	pctx, pcancel := context.WithTimeout(ctx, submitWait)
	key, _ := runKey(tenant, run)
	_, err = n.cancels.Put(pctx, key, []byte(cause))
	pcancel()
	if err != nil {
		return "", false, fmt.Errorf("cluster: keep the cancel of run %q: %w", run, err)
	}
	wctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	m, err := n.nc.RequestWithContext(wctx, subj, []byte(cause))
	switch {
	case err == nil:
		return string(m.Data), true, nil
	case ctx.Err() != nil:
		return "", false, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders):
		return "", false, nil
	}
	return "", false, fmt.Errorf("cluster: ask for the cancel of run %q: %w", run, err)
}

// ServeCancels answers the cancels the nodes ask for with held, which cancels the run when this
// node holds it and returns its answer and true, or false when it does not (then this node says
// nothing: the node that holds it answers). held runs on the subscription's goroutine, one at a
// time: it must not wait.
func (n *Node) ServeCancels(held func(tenant, run, cause string) (string, bool)) error {
	prefix := n.cfg.Name + ".cancel."
	_, err := n.nc.Subscribe(prefix+"*.*", func(m *nats.Msg) {
		tenant, run, ok := strings.Cut(strings.TrimPrefix(m.Subject, prefix), ".")
		if !ok || m.Reply == "" {
			return
		}
		if tenant == "_" {
			tenant = ""
		}
		cause := m.Data[:min(len(m.Data), maxCause)]
		if answer, ok := held(tenant, run, strings.ToValidUTF8(string(cause), "")); ok {
			_ = m.Respond([]byte(answer))
		}
	})
	if err != nil {
		return fmt.Errorf("cluster: listen for cancels: %w", err)
	}
	return nil
}
