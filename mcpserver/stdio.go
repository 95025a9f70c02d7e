package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/internal/jsonkind"
)

// envelopeBytes is what one message may hold beyond a run's arguments: JSON-RPC's envelope, the
// tool's name, the progress token.
const envelopeBytes = 64 << 10

// MaxMessageBytes bounds one message from a client, over stdio or HTTP: the runtime's bound on a
// run's arguments (Runtime.MaxArgsBytes, which the policy and skillbox --max-args-bytes set) and
// the envelope. The runtime decides the bound; this face reads within it, so a client cannot make
// it hold more than a run would take.
func (s *Server) MaxMessageBytes() int64 { return s.rt.MaxArgsBytes() + envelopeBytes }

// stdioReadBuffer is the size of the buffered reader under the line splitter.
const stdioReadBuffer = 64 << 10

// maxReasonBytes bounds the part of an error reply that quotes the client's input (a version tag,
// say), so a refusal is never as large as what it refuses.
const maxReasonBytes = 256

// stdioTransport is MCP's stdio transport (newline-delimited JSON-RPC) that survives its client:
// the SDK's own [mcp.IOTransport] ends the session on the first line that is not a JSON-RPC message
// (and on an over-long one), so one stray print, or one message a client got wrong, took every tool
// away from the agent. This one answers such a line as JSON-RPC 2.0 says and reads on:
//
//   - a line that is not JSON (or not UTF-8, which JSON text must be) gets a parse error,
//     -32700, with id null;
//   - valid JSON that is not a JSON-RPC message (42, {"foo":1}, a request without "jsonrpc":"2.0")
//     gets invalid request, -32600, with the request's id when it has a usable one, else null;
//   - a JSON array (a batch) gets one -32600 reply: MCP dropped batching in 2025-06-18, and the
//     SDK, which kept it for older revisions only, ends the session for newer ones; a client
//     sends each message on its own line;
//   - a line longer than [Server.MaxMessageBytes] gets -32600 as soon as it crosses the bound, and the
//     rest of it is skipped up to the next newline;
//   - empty and blank lines are ignored.
//
// MCP's stdio framing is one message per line with no embedded newline, so a message pretty printed
// over several lines is refused line by line (the SDK's decoder used to accept it). Every refusal
// is logged at warn. Replies and the SDK's messages go through one writer, a whole line at a time,
// so they never interleave. The end of in ends the session as before.
type stdioTransport struct {
	in      io.ReadCloser
	out     io.WriteCloser
	logger  *slog.Logger // nil: discard
	maxLine func() int   // the bound on a line, read for each line
}

// Connect implements [mcp.Transport]; it starts the goroutine that reads in.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	logger := t.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	maxLine := t.maxLine
	c := &stdioConn{
		in: t.in, out: t.out, logger: logger,
		incoming: make(chan readResult),
		closed:   make(chan struct{}),
	}
	go c.readLoop(newLineReader(t.in, maxLine))
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// stdioConn is the [mcp.Connection] of a stdioTransport.
type stdioConn struct {
	in     io.ReadCloser
	out    io.WriteCloser
	logger *slog.Logger

	writeMu sync.Mutex // one line at a time on out: the SDK's messages and the refusals

	// incoming carries the messages the read loop accepted, and then its error. A goroutine
	// reads, so that Close unblocks a Read waiting for input even when in.Read does not return
	// (the goroutine then leaks, as the SDK's does: stdin cannot portably be interrupted).
	incoming chan readResult

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// SessionID implements [mcp.Connection]: stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

// Read implements [mcp.Connection]: the next JSON-RPC message of the client, io.EOF at the end
// of its input or after Close.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements [mcp.Connection]: msg as one line.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcp stdio: encoding a message: %w", err)
	}
	return c.writeLine(data)
}

// Close implements [mcp.Connection]: it closes in and out, once.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = errors.Join(c.in.Close(), c.out.Close())
	})
	return c.closeErr
}

// writeLine writes data and a newline in one Write, under writeMu.
func (c *stdioConn) writeLine(data []byte) error {
	line := make([]byte, 0, len(data)+1)
	line = append(append(line, data...), '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(line)
	return err
}

// readLoop hands every message of lr to Read, and then the error that ended it.
func (c *stdioConn) readLoop(lr *lineReader) {
	for {
		msg, err := c.next(lr)
		select {
		case c.incoming <- readResult{msg, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// next returns the next message of lr, answering and skipping every line that is none. Its error
// is lr's (io.EOF at the end), or that of writing a reply: the SDK's writes would fail as well.
func (c *stdioConn) next(lr *lineReader) (jsonrpc.Message, error) {
	for {
		line, err := lr.next()
		var ref *refusal
		switch {
		case errors.Is(err, errLineTooLong):
			ref = &refusal{code: jsonrpc.CodeInvalidRequest, reason: fmt.Sprintf(
				"longer than %d bytes (the runtime's bound on arguments, runs.maxArgsBytes, and the message's envelope), the rest of it is skipped: send smaller arguments", lr.max)}
		case err != nil:
			return nil, err
		default:
			var msg jsonrpc.Message
			msg, ref = parseLine(line)
			if ref == nil {
				if msg != nil {
					return msg, nil
				}
				continue // a blank line
			}
		}
		c.logger.Warn("mcp stdio: refused a line that is not a JSON-RPC message", "line", lr.lines, "code", ref.code, "error", ref.reason)
		select {
		case <-c.closed:
			return nil, io.EOF
		default:
		}
		if err := c.writeLine(ref.reply(lr.lines)); err != nil {
			return nil, fmt.Errorf("mcp stdio: answering line %d: %w", lr.lines, err)
		}
	}
}

// refusal is the error reply to a line that is no JSON-RPC message.
type refusal struct {
	code   int64
	id     json.RawMessage // nil: null
	reason string
}

// reply is the error response to line number line.
func (r *refusal) reply(line int) []byte {
	kind := "invalid request"
	if r.code == jsonrpc.CodeParseError {
		kind = "parse error"
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", r.id, wireError{r.code, fmt.Sprintf("%s: line %d: %s", kind, line, r.reason)}})
	if err != nil { // r.id is a string or an integer parseLine checked
		panic("mcpserver: encoding a refusal: " + err.Error())
	}
	return data
}

// parseLine returns line's message, nil for a blank line, or the refusal of a line that is not a
// JSON-RPC message.
func parseLine(line []byte) (jsonrpc.Message, *refusal) {
	line = bytes.Trim(line, " \t\r\n")
	switch {
	case len(line) == 0:
		return nil, nil
	case !utf8.Valid(line):
		return nil, &refusal{code: jsonrpc.CodeParseError, reason: "not UTF-8, which JSON text must be"}
	case !json.Valid(line):
		return nil, &refusal{code: jsonrpc.CodeParseError, reason: "not JSON: " + syntaxError(line) + "; send one JSON-RPC message per line"}
	case line[0] == '[':
		return nil, &refusal{code: jsonrpc.CodeInvalidRequest, reason: "JSON-RPC batches are not supported (MCP has none since 2025-06-18): send each message on its own line"}
	case line[0] != '{':
		return nil, &refusal{code: jsonrpc.CodeInvalidRequest, reason: "a JSON-RPC message is an object, not " + jsonkind.Of(line)}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, &refusal{code: jsonrpc.CodeInvalidRequest, id: requestID(line), reason: truncate(err.Error(), maxReasonBytes)}
	}
	return msg, nil
}

// syntaxError says where line, which is not valid JSON, goes wrong.
func syntaxError(line []byte) string {
	var raw json.RawMessage
	err := json.Unmarshal(line, &raw)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

// requestID is the id of line, a JSON object that failed to decode as a message, to address the
// refusal to: only when it has a method (it was meant as a request; a malformed response is
// answered with null rather than with the id of one of the server's own calls) and an id that is
// a string or an integer. JSON-RPC wants null when the id cannot be detected.
func requestID(line []byte) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return nil
	}
	if _, ok := obj["method"]; !ok {
		return nil
	}
	id := obj["id"]
	switch {
	case len(id) == 0:
		return nil
	case id[0] == '"':
		var s string
		if json.Unmarshal(id, &s) != nil || len(s) > maxReasonBytes {
			return nil
		}
		return id
	default:
		if _, err := strconv.ParseInt(string(id), 10, 64); err != nil {
			return nil
		}
		return id
	}
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// errLineTooLong is lineReader's refusal of a line longer than its bound.
var errLineTooLong = errors.New("line too long")

// lineReader splits a stream into lines of at most max bytes each (without the newline), holding
// no more than max bytes of any line: a longer one is refused as soon as it crosses max, and the
// rest of it is discarded as it arrives.
type lineReader struct {
	r     *bufio.Reader
	bound func() int // max, read as each line starts
	max   int
	lines int  // the lines started so far: the number of the current one
	skip  bool // the current line was refused: discard up to its newline
}

func newLineReader(r io.Reader, maxLine func() int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, stdioReadBuffer), bound: maxLine}
}

// next returns the next line, without its newline, in a new slice of at most lr.max bytes (the
// caller may keep it). A last line without a newline is returned before io.EOF. A line longer
// than lr.max yields errLineTooLong once, and next call goes on after its newline.
func (lr *lineReader) next() ([]byte, error) {
	if lr.skip {
		if err := lr.discardLine(); err != nil {
			return nil, err
		}
		lr.skip = false
	}
	lr.max = lr.bound()
	var line []byte
	started := false
	for {
		frag, err := lr.r.ReadSlice('\n')
		if len(frag) > 0 && !started {
			started = true
			lr.lines++
		}
		body := bytes.TrimSuffix(frag, []byte{'\n'})
		if len(line)+len(body) > lr.max {
			// Unless frag ended the line (or the input), skip the rest of it next time. A read
			// error other than a full buffer comes back on the next read.
			lr.skip = errors.Is(err, bufio.ErrBufferFull)
			return nil, errLineTooLong
		}
		line = appendBounded(line, body, lr.max)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && started:
			return line, nil // the next call reads io.EOF again
		default:
			return nil, err
		}
	}
}

// discardLine reads up to and including the next newline.
func (lr *lineReader) discardLine() error {
	for {
		_, err := lr.r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// appendBounded appends frag to line, growing it to at most limit bytes of capacity (len(line) +
// len(frag) <= limit): append's own growth could reserve more than the bound.
func appendBounded(line, frag []byte, limit int) []byte {
	if need := len(line) + len(frag); need > cap(line) {
		grown := min(max(2*cap(line), need, 512), limit)
		next := make([]byte, len(line), grown)
		copy(next, line)
		line = next
	}
	return append(line, frag...)
}
