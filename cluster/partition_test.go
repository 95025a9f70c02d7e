package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proxy forwards TCP from a loopback port to target until cut: a partition without firewall
// rules. In front of a member's route port (advertised in its place) it knows which server
// dialed each connection through it (a route's first message, CONNECT, names the dialer's
// server id), so a partition of one member cuts its routes alone.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []*routeConn
	cut    map[string]bool // server ids whose connections are refused; "*" all
}

type routeConn struct {
	down, up net.Conn
	from     string // the dialer's server id, once its CONNECT was read
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, cut: map[string]bool{}}
	t.Cleanup(func() { ln.Close(); p.partition("*") })
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut["*"] {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		rc := &routeConn{down: c, up: up}
		p.conns = append(p.conns, rc)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
		go p.forward(rc)
	}
}

// forward copies the dialer's bytes to the member, reading the dialer's id from its first
// message (CONNECT), and only from that: later messages carry JSON with names of their own.
func (p *proxy) forward(rc *routeConn) {
	defer rc.up.Close()
	var first []byte // the dialer's bytes up to the end of its first line
	tagged := false
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.down.Read(buf)
		if n > 0 && !tagged {
			first = append(first, buf[:n]...)
			if end := bytes.IndexByte(first, '\n'); end >= 0 || len(first) > 64<<10 {
				tagged = true
				line := first
				if end >= 0 {
					line = first[:end]
				}
				p.mu.Lock()
				if i := bytes.Index(line, []byte(`"name":"`)); i >= 0 {
					if j := bytes.IndexByte(line[i+8:], '"'); j >= 0 {
						rc.from = string(line[i+8 : i+8+j])
					}
				}
				refused := p.cut[rc.from] && rc.from != ""
				p.mu.Unlock()
				if refused {
					rc.down.Close()
					return
				}
				first = nil
			}
		}
		if n > 0 {
			if _, werr := rc.up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// partition closes the connections the server with id dialed through p and refuses its new
// ones; "*" every connection.
func (p *proxy) partition(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut[id] = true
	for _, rc := range p.conns {
		if id == "*" || rc.from == id {
			rc.down.Close()
			rc.up.Close()
		}
	}
}

// A member of an embedded cluster cut from the others on its route ports (the member keeps
// its own client connection: its NATS server is in its process) stops the run it holds,
// saying it lost the cluster, before the ack wait gives the run to a node of the majority,
// which then has it: delivered again, never run twice at once.
func TestAMemberCutOffItsRoutesStopsItsRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	peers := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	proxies := make([]*proxy, 3)
	advertised := make([]string, 3)
	for i := range proxies {
		proxies[i] = newProxy(t, peers[i])
		advertised[i] = proxies[i].ln.Addr().String()
	}
	const ackWait = 6 * time.Second // the minority stops at two thirds of it: 2 s of margin
	nodes := threeMembers(t, ctx, func(i int) Config {
		return Config{PeerListen: peers[i], PeerAdvertise: advertised[i], Routes: advertised, AckWait: ackWait}
	})
	if q, why, err := nodes[0].SubmitRun(ctx, "", "run_cut", []byte(`{}`)); !q || err != nil {
		t.Fatal(why, err)
	}
	// n2 takes the run; n1 has no room until n2 is cut off.
	var cutOffStopped atomic.Bool
	taken := make(chan struct{})
	stopped := make(chan error, 1)
	if err := nodes[2].ServeRuns(func() bool { return true }, func(ctx context.Context, _, _ string, _ []byte, _ uint64, settled func()) bool {
		settled()
		close(taken)
		<-ctx.Done()
		cutOffStopped.Store(true)
		stopped <- context.Cause(ctx)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	<-taken
	var room atomic.Bool
	type delivery struct {
		n           uint64
		afterTheCut bool // the cut-off member had stopped its run by then
	}
	again := make(chan delivery, 1)
	if err := nodes[1].ServeRuns(room.Load, func(_ context.Context, _, _ string, _ []byte, delivered uint64, settled func()) bool {
		settled()
		again <- delivery{delivered, cutOffStopped.Load()}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	n2 := nodes[2].srv.ID()
	proxies[2].partition("*")
	proxies[0].partition(n2)
	proxies[1].partition(n2)
	room.Store(true)
	select {
	case cause := <-stopped:
		if !errors.Is(cause, ErrLostCluster) {
			t.Fatalf("the cut-off member's run ended with %v, want ErrLostCluster", cause)
		}
	case d := <-again:
		t.Fatalf("the run was delivered again (delivery %d) while the cut-off member still ran it", d.n)
	case <-ctx.Done():
		t.Fatal("the cut-off member never stopped its run")
	}
	var d delivery
	select {
	case d = <-again:
	case <-ctx.Done():
		t.Fatalf("the majority never got the run (routes: n0 %d, n1 %d, the cut-off n2 %d)",
			nodes[0].srv.NumRoutes(), nodes[1].srv.NumRoutes(), nodes[2].srv.NumRoutes())
	}
	if !d.afterTheCut {
		t.Fatal("the run was delivered again before the cut-off member stopped it: it ran twice at once")
	}
	if d.n != 2 {
		t.Fatalf("the majority got the run at delivery %d, want 2", d.n)
	}
}
