package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// A bucket's Get is a direct get, which any replica of the bucket answers, the nearest first:
// the node's own embedded server, whose replica may not have applied a write the leader
// already acknowledged. A node that reads what another node just wrote (an install, a cancel,
// a quota) must see it, so it reads from the leader, which answers only once its replica holds
// every write it acknowledged.

// kvOperation is the header a bucket's delete and purge markers carry.
const kvOperation = "KV-Operation"

// kvEntry is a key's last value read from its bucket's leader; rev is its revision.
type kvEntry struct {
	value []byte
	rev   uint64
}

// leaderGetWait bounds a read whose context has no deadline, as the client's own default bounds
// a bucket's Get: a leader being elected answers nothing, and no other member answers.
const leaderGetWait = 5 * time.Second

// errKeyNotFound is what leaderGet answers for a key with no value, or whose last is a delete.
var errKeyNotFound = errors.New("cluster: no value for the key")

// leaderGet reads key's last value in bucket from the leader of the bucket's stream.
func (n *Node) leaderGet(ctx context.Context, bucket, key string) (kvEntry, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, leaderGetWait)
		defer cancel()
	}
	req, err := json.Marshal(server.JSApiMsgGetRequest{LastFor: "$KV." + bucket + "." + key})
	if err != nil {
		return kvEntry{}, err
	}
	m, err := n.nc.RequestWithContext(ctx, fmt.Sprintf(server.JSApiMsgGetT, "KV_"+bucket), req)
	if err != nil {
		return kvEntry{}, err
	}
	var resp server.JSApiMsgGetResponse
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return kvEntry{}, fmt.Errorf("cluster: an unreadable answer of JetStream: %w", err)
	}
	if resp.Error != nil {
		if resp.Error.ErrCode == uint16(server.JSNoMessageFoundErr) {
			return kvEntry{}, errKeyNotFound
		}
		return kvEntry{}, resp.Error
	}
	if resp.Message == nil {
		return kvEntry{}, errors.New("cluster: JetStream answered no message")
	}
	if len(resp.Message.Header) > 0 {
		h, err := nats.DecodeHeadersMsg(resp.Message.Header)
		if err != nil {
			return kvEntry{}, fmt.Errorf("cluster: an unreadable header of %s: %w", key, err)
		}
		if op := h.Get(kvOperation); op == "DEL" || op == "PURGE" {
			return kvEntry{}, errKeyNotFound
		}
	}
	return kvEntry{value: resp.Message.Data, rev: resp.Message.Sequence}, nil
}
