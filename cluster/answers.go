package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// answerWait bounds how long an answer to a permission request waits for the node that holds its
// run: a run no node answers for has ended, or its node has gone.
const answerWait = 2 * time.Second

// maxAnswerBody bounds what an answer carries (who answers, and what), as a node reads it.
const maxAnswerBody = 8 << 10

// answerSubject is the subject that carries answers to run's permission requests.
func (n *Node) answerSubject(tenant, run string) (string, bool) {
	key, ok := runKey(tenant, run)
	return n.cfg.Name + ".answer." + key, ok
}

// AnswerPermission hands body, an answer to a permission request of run, to the node that holds
// the run, and returns that node's reply; held is false when none answered within answerWait,
// or run is no run id. Like a cancel, it is a request on a core subject: it reaches the nodes
// connected now, the ones that can hold a run that waits for a person. Unlike a cancel, nothing
// is kept for later: a run that waits for an answer is in flight on a node.
func (n *Node) AnswerPermission(ctx context.Context, tenant, run string, body []byte) (reply []byte, held bool, err error) {
	subj, ok := n.answerSubject(tenant, run)
	if !ok || len(body) > maxAnswerBody {
		return nil, false, nil
	}
	wctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	m, err := n.nc.RequestWithContext(wctx, subj, body)
	switch {
	case err == nil:
		return m.Data, true, nil
	case ctx.Err() != nil:
		return nil, false, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders):
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("cluster: answer a permission request of run %q: %w", run, err)
}

// ServeAnswers answers the answers other nodes hand on with held, which gives the answer to the
// run when this node holds it and returns its reply and true, or false when it does not (then
// this node says nothing: the node that holds it replies). held runs on the subscription's
// goroutine, one at a time: it must not wait long.
func (n *Node) ServeAnswers(held func(tenant, run string, body []byte) ([]byte, bool)) error {
	prefix := n.cfg.Name + ".answer."
	_, err := n.nc.Subscribe(prefix+"*.*", func(m *nats.Msg) {
		tenant, run, ok := strings.Cut(strings.TrimPrefix(m.Subject, prefix), ".")
		if !ok || m.Reply == "" || len(m.Data) > maxAnswerBody {
			return
		}
		if tenant == "_" {
			tenant = ""
		}
		if reply, ok := held(tenant, run, m.Data); ok {
			_ = m.Respond(reply)
		}
	})
	if err != nil {
		return fmt.Errorf("cluster: listen for answers to permission requests: %w", err)
	}
	return nil
}

// gatherWait bounds how long a gather of the requests waiting on every node waits for the nodes
// that do not reply (gone, or slow): the replies that came are the answer.
const gatherWait = time.Second

// maxGatherReply bounds one node's reply to a gather.
const maxGatherReply = 1 << 20

// requestsSubject is the subject that asks every node for the permission requests of tenant
// waiting there.
func (n *Node) requestsSubject(tenant string) (string, bool) {
	t, ok := token(tenant)
	return n.cfg.Name + ".requests." + t, ok
}

// GatherPermissionRequests asks every node for the permission requests waiting there that body
// (who asks) may see, and returns the nodes' replies: as many as the nodes present, or those that
// came within gatherWait.
func (n *Node) GatherPermissionRequests(ctx context.Context, tenant string, body []byte) ([][]byte, error) {
	subj, ok := n.requestsSubject(tenant)
	if !ok || len(body) > maxAnswerBody {
		return nil, fmt.Errorf("cluster: tenant %q is no tenant's name", tenant)
	}
	want := 0
	if keys, err := n.nodes.ListKeys(ctx); err == nil {
		for range keys.Keys() {
			want++
		}
	}
	inbox := n.nc.NewRespInbox()
	sub, err := n.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("cluster: gather permission requests: %w", err)
	}
	defer sub.Unsubscribe()
	if err := n.nc.PublishRequest(subj, inbox, body); err != nil {
		return nil, fmt.Errorf("cluster: gather permission requests: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, gatherWait)
	defer cancel()
	var replies [][]byte
	for want == 0 || len(replies) < want {
		m, err := sub.NextMsgWithContext(wctx)
		if err != nil {
			break // the wait is over: the replies that came are the answer
		}
		if len(m.Data) <= maxGatherReply {
			replies = append(replies, m.Data)
		}
	}
	return replies, ctx.Err()
}

// ServePermissionRequests answers the gathers of the nodes with list: the requests of tenant
// waiting on this node that body (who asks) may see.
func (n *Node) ServePermissionRequests(list func(tenant string, body []byte) []byte) error {
	prefix := n.cfg.Name + ".requests."
	_, err := n.nc.Subscribe(prefix+"*", func(m *nats.Msg) {
		tenant := strings.TrimPrefix(m.Subject, prefix)
		if m.Reply == "" || len(m.Data) > maxAnswerBody {
			return
		}
		if tenant == "_" {
			tenant = ""
		}
		_ = m.Respond(list(tenant, m.Data))
	})
	if err != nil {
		return fmt.Errorf("cluster: listen for gathers of permission requests: %w", err)
	}
	return nil
}
