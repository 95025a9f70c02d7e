package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
)

// Permission requests for clients of the stateless revision (2026-07-28), which take no request
// from the server while it serves one: a call whose run asks a person answers "input required"
// with the question as an elicitation (multi round-trip requests), and the run waits, parked
// here, for the client to call again with the person's answer and the state it was given. The
// second call answers with the run's result, or with its next question.
//
// A parked run is this process's: a retry that reaches another replica finds no state, and the
// run goes on without an answer when its request's wait ends, refused as without asking.

// maxParked bounds the runs parked at once; past it, a run asks nobody.
const maxParked = 256

// parkedLinger is how long a parked run's result waits for the client's next call after the run
// ends, before it is dropped.
const parkedLinger = 5 * time.Minute

// parking holds a Server's parked runs, by the state their client echoes back.
type parking struct {
	mu   sync.Mutex
	runs map[string]*parkedRun
}

// parkedRun is a call's run that may wait for a person between two calls.
type parkedRun struct {
	owner access.Principal
	asks  chan parkedAsk           // the run's questions, one at a time
	done  chan *mcp.CallToolResult // its result, once
	reply chan parkedReply         // the answers the client's calls bring
	// cancel ends the run: a client that cancels a call it waits on cancels its run.
	cancel context.CancelFunc
	// Under parking.mu: when its result came (zero before), and the question asked last.
	ended time.Time
	q     *run.PermissionRequest
}

// parkedAsk is a question of a parked run.
type parkedAsk struct{ q run.PermissionRequest }

// parkedReply is an answer to the question id: one that comes after its question's wait ended
// is not taken for the next question's.
type parkedReply struct {
	id string
	a  run.PermissionAnswer
}

// statelessClient reports whether req's client speaks a revision that takes no request from the
// server mid-call, and takes form elicitations: its runs ask by parking.
func statelessClient(req *mcp.CallToolRequest) bool {
	if req == nil || req.Session == nil {
		return false
	}
	if ip := req.Session.InitializeParams(); ip != nil && ip.ProtocolVersion < "2026-07-28" {
		return false
	}
	return takesForms(req.ClientCapabilities())
}

// takesForms reports whether a client with caps takes form elicitations.
func takesForms(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// parkedAsker is the Asker of a parked run: it hands the question to the call that waits on the
// run, and waits for the answer the client's next call brings.
type parkedAsker struct{ p *parkedRun }

// errNoRetry is a question whose answer did not come before the request's wait ended.
var errNoRetry = errors.New("the client did not call again with an answer")

func (a parkedAsker) Ask(ctx context.Context, q run.PermissionRequest) (run.PermissionAnswer, error) {
	select {
	case a.p.asks <- parkedAsk{q}:
	case <-ctx.Done():
		return run.PermissionAnswer{}, errNoRetry
	}
	for {
		select {
		case r := <-a.p.reply:
			if r.id == q.ID {
				return r.a, nil
			}
		case <-ctx.Done():
			return run.PermissionAnswer{}, errNoRetry
		}
	}
}

// newToken returns a parked run's state: 128 random bits, which only its owner may echo.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "park_" + hex.EncodeToString(b[:])
}

// withAnswers runs call, a tool's run, so that its permission requests reach a stateless
// client: the first call starts it and answers with its result or its first question; a call
// that echoes a parked run's state brings the answer to that question and waits again. A
// client that is not stateless gets call's result as it is (its run asks through askerFor).
func (s *Server) withAnswers(ctx context.Context, req *mcp.CallToolRequest, call func(context.Context, run.Asker) *mcp.CallToolResult) *mcp.CallToolResult {
	if req.Params != nil && req.Params.RequestState != "" {
		return s.resume(ctx, req)
	}
	if !statelessClient(req) {
		return call(ctx, askerFor(req))
	}
	p := &parkedRun{owner: s.principal(ctx), asks: make(chan parkedAsk), done: make(chan *mcp.CallToolResult, 1),
		reply: make(chan parkedReply, 1)}
	token, ok := s.parking.park(p)
	var asker run.Asker
	if ok {
		asker = parkedAsker{p}
	}
	// The run outlives this call when it parks: its own deadline ends it, not the call's end.
	// A cancel of a call that waits on it (this one, or the one that brings an answer) ends it.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	go func() {
		defer cancel()
		res := call(rctx, asker)
		s.parking.end(p)
		p.done <- res
	}()
	return s.await(ctx, token, p)
}

// await waits for p's next question, or its result.
func (s *Server) await(ctx context.Context, token string, p *parkedRun) *mcp.CallToolResult {
	select {
	case res := <-p.done:
		s.parking.drop(token)
		return res
	case a := <-p.asks:
		s.parking.asking(p, a.q)
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{a.q.ID: elicitParams(a.q)},
			RequestState:  token,
			Meta:          mcp.Meta{MetaRunID: a.q.RunID},
		}
	case <-ctx.Done():
		// The client canceled the call it waited on, or went away: the run ends with it.
		p.cancel()
		s.parking.drop(token)
		return <-p.done
	}
}

// resume brings a stateless client's answer to its parked run, and waits for what comes next.
func (s *Server) resume(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	token := req.Params.RequestState
	p, q := s.parking.find(token, s.principal(ctx))
	if p == nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: "invalid_args: requestState names no run waiting here: it ended, or waits on another replica"}}}
	}
	if q != nil {
		ans := run.PermissionAnswer{} // no answer: the run goes on without one
		if r, ok := req.Params.InputResponses[q.ID].(*mcp.ElicitResult); ok {
			if a, err := answerOf(*q, r); err == nil {
				ans = a
			}
		}
		for drained := false; !drained; { // an answer nobody took was late: it goes
			select {
			case <-p.reply:
			default:
				drained = true
			}
		}
		select {
		case p.reply <- parkedReply{q.ID, ans}:
		default:
		}
	}
	return s.await(ctx, token, p)
}

// park keeps p under a new state, unless maxParked runs are parked: false then.
func (k *parking) park(p *parkedRun) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	for t, r := range k.runs { // the results nobody came back for
		if !r.ended.IsZero() && now.Sub(r.ended) > parkedLinger {
			delete(k.runs, t)
		}
	}
	if len(k.runs) >= maxParked {
		return "", false
	}
	if k.runs == nil {
		k.runs = map[string]*parkedRun{}
	}
	token := newToken()
	k.runs[token] = p
	return token, true
}

func (k *parking) end(p *parkedRun) {
	k.mu.Lock()
	p.ended = time.Now()
	k.mu.Unlock()
}

func (k *parking) drop(token string) {
	k.mu.Lock()
	delete(k.runs, token)
	k.mu.Unlock()
}

func (k *parking) asking(p *parkedRun, q run.PermissionRequest) {
	k.mu.Lock()
	p.q = &q
	k.mu.Unlock()
}

// find returns the run parked under token, if who is its owner, and the question it asked last
// (taken: one answer each).
func (k *parking) find(token string, who access.Principal) (*parkedRun, *run.PermissionRequest) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := k.runs[token]
	if p == nil || p.owner != who {
		return nil, nil
	}
	q := p.q
	p.q = nil
	return p, q
}
