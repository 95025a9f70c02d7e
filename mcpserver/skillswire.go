package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSkillsInFlight bounds the extension's requests of one connection answered at once: the
// first listing of a page of skills hashes their files. A client that sends more waits, as the
// read of its next message waits for a slot.
const maxSkillsInFlight = 4

// Transport wraps t so that its connections answer the Skills extension's requests (skills/list,
// skills/get) before the SDK, which refuses methods it does not know, sees them. [Server.RunStdio]
// uses it; connect any other transport through it too: s.MCP().Connect(ctx, s.Transport(t), nil).
// The streamable HTTP transport is the one exception: [Server.Handler] answers those requests
// in front of it.
func (s *Server) Transport(t mcp.Transport) mcp.Transport {
	return &skillsTransport{Transport: t, s: s}
}

// skillsTransport is a transport whose connections answer the extension's requests themselves
// and hand every other message to the SDK.
type skillsTransport struct {
	mcp.Transport
	s *Server
}

// Connect implements [mcp.Transport].
func (t *skillsTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.Background())
	return &skillsConn{Connection: conn, s: t.s, ctx: cctx, cancel: cancel, slots: make(chan struct{}, maxSkillsInFlight)}, nil
}

// skillsConn is a connection of a skillsTransport. Its answers are written by the connection's
// own Write, which the SDK calls from several goroutines too, and which writes whole messages.
type skillsConn struct {
	mcp.Connection
	s      *Server
	ctx    context.Context // ends with Close: answers still being made are not written
	cancel context.CancelFunc
	slots  chan struct{}
}

// Read implements [mcp.Connection]: the next message that is not a request of the extension.
func (c *skillsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() || !isSkillsMethod(req.Method) {
			return msg, nil
		}
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.ctx.Done():
			return nil, io.EOF
		}
		go func() {
			defer func() { <-c.slots }()
			resp := c.s.answerSkills(c.ctx, req)
			if c.ctx.Err() != nil {
				return
			}
			if err := c.Connection.Write(c.ctx, resp); err != nil {
				c.s.logger.Warn("mcp: cannot answer a skills request", "method", req.Method, "err", err)
			}
		}()
	}
}

// Close implements [mcp.Connection]: answers still being made are dropped. It does not wait for
// them: one may be blocked writing to a client that stopped reading, as the SDK's own writes may.
func (c *skillsConn) Close() error {
	c.cancel()
	return c.Connection.Close()
}

// skillsHTTP answers the extension's requests sent to the streamable HTTP endpoint next serves:
// a POST whose body is one JSON-RPC request of the extension. It checks what next would check
// of such a POST, so that a client sees the same errors either way: the Host header on a
// loopback listener (DNS rebinding), the Accept and Content-Type headers, the protocol version
// header, and, when next keeps sessions (stateful), the session the Mcp-Session-Id header names.
// A request of protocol 2026-07-28 or later carries no session, and needs none. The answer is
// one application/json response. Every other request goes to next untouched.
//
// # Notes
//
// An answer does not restart the session's idle timer, as the SDK's own answers do.
func (s *Server) skillsHTTP(next http.Handler, stateless bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || mediaType(r.Header.Get("Content-Type")) != "application/json" {
			next.ServeHTTP(w, r)
			return
		}
		req := peekSkillsRequest(r)
		if req == nil {
			next.ServeHTTP(w, r)
			return
		}
		if code, msg := s.checkSkillsPOST(r, stateless); code != 0 {
			http.Error(w, msg, code)
			return
		}
		data, err := jsonrpc.EncodeMessage(s.answerSkills(r.Context(), req))
		if err != nil {
			http.Error(w, "the answer could not be encoded", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(data)
	})
}

// maxPeekBytes is how much of a POST's body is read to see whether it is a request of the
// extension, which is a few hundred bytes; a longer body is someone else's.
const maxPeekBytes = 64 << 10

// peekSkillsRequest returns r's body as a request of the extension, or nil when it is not one; the
// body is left for the next handler to read whole either way.
func peekSkillsRequest(r *http.Request) *jsonrpc.Request {
	if r.Body == nil {
		return nil
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeekBytes+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || len(head) > maxPeekBytes {
		return nil
	}
	trimmed := bytes.TrimSpace(head)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		return nil
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || !isSkillsMethod(req.Method) {
		return nil
	}
	return req
}

type readCloser struct {
	io.Reader
	io.Closer
}

// checkSkillsPOST is the status and message the SDK would refuse r with, or 0.
func (s *Server) checkSkillsPOST(r *http.Request, stateless bool) (int, string) {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if isLoopback(local.String()) && !isLoopback(r.Host) {
			return http.StatusForbidden, "Forbidden: invalid Host header " + truncate(r.Host, maxReasonBytes)
		}
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	if !jsonOK || !streamOK {
		return http.StatusBadRequest, "Accept must contain both 'application/json' and 'text/event-stream'"
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	supported := mcp.SupportedProtocolVersions()
	if version != "" && !slices.Contains(supported, version) && !statelessProtocol(version) {
		return http.StatusBadRequest, "Bad Request: Unsupported protocol version (supported versions: " + strings.Join(supported, ",") + ")"
	}
	if stateless || statelessProtocol(version) {
		return 0, ""
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return http.StatusBadRequest, "Bad Request: Mcp-Session-Id header required: initialize a session first"
	}
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id {
			return 0, ""
		}
	}
	return http.StatusNotFound, "session not found"
}

func mediaType(value string) string {
	mt, _, err := mime.ParseMediaType(value)
	if err != nil {
		return ""
	}
	return mt
}

// accepts reports whether the Accept header values take JSON and an event stream.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for _, token := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(token, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// isLoopback reports whether addr (a host, or host:port) is localhost or a loopback address.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
