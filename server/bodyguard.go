package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// A client that sends its request body slowly holds a connection, and a goroutine, for as long
// as it likes: Go's server sets no deadline on a body, and before it answers a request whose
// handler did not read the body (a 401, a 404) it reads up to 256 KiB of it, so even a refusal
// waits for the client. guardBodies bounds both:
//
//   - a body must arrive within Options.BodyTimeout, and after its first bodyGrace at
//     Options.MinBodyRate bytes a second on average: a connection's read deadline follows the
//     bytes as they come, and a body that falls behind fails the read with *BodyTimeoutError
//     (408), and the connection closes;
//   - an answer given before the body was read to its end says "Connection: close", so the
//     server sends it at once instead of first reading the body, and the connection closes
//     after it without reading the rest.
//
// Once a body is read to its end the deadline is lifted (net/http clears it when it starts its
// background read of the connection): a run that streams its events for minutes, or waits for
// its result, is bounded by its own timeout, not by the body's.

// bodyGrace is how long a body may take before MinBodyRate applies: a client's first bytes may
// wait on its own set-up (a TLS handshake's tail, a file opened).
const bodyGrace = 5 * time.Second

// BodyTimeoutError is a request body that did not arrive in time: Options.BodyTimeout passed,
// or it fell below Options.MinBodyRate.
type BodyTimeoutError struct {
	Read    int64         // bytes that did arrive
	Elapsed time.Duration // since the request's handling began
}

func (e *BodyTimeoutError) Error() string {
	return fmt.Sprintf("the request body was too slow: %d bytes in %s", e.Read, e.Elapsed.Round(time.Millisecond))
}

// guardBodies wraps next with the body bounds above. A request without a body, or on a
// connection whose read deadline cannot be set, passes untouched.
func guardBodies(next http.Handler, timeout time.Duration, minRate int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		g := &guardedBody{src: r.Body, rc: rc, start: time.Now(), timeout: timeout, minRate: minRate}
		if err := g.arm(); err != nil {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = g
		next.ServeHTTP(&closeIfUnread{ResponseWriter: w, g: g}, r)
		if !g.ended() {
			// What the client has not sent is not waited for: the server's own read of the rest
			// fails at once, and the connection closes.
			_ = rc.SetReadDeadline(time.Now())
		}
	})
}

// guardedBody is a request body whose connection's read deadline follows the bytes read.
type guardedBody struct {
	src     io.ReadCloser
	rc      *http.ResponseController
	start   time.Time
	timeout time.Duration
	minRate int64

	mu   sync.Mutex
	n    int64
	done bool // read to its end (or failed): the deadline is lifted, or the connection closes
}

// deadline is when the body must have arrived, given n bytes so far.
func (g *guardedBody) deadline(n int64) time.Time {
	end := g.start.Add(g.timeout)
	if g.minRate > 0 {
		// n bytes buy n/minRate seconds past the grace.
		if d := g.start.Add(bodyGrace + time.Duration(float64(n)/float64(g.minRate)*float64(time.Second))); d.Before(end) {
			end = d
		}
	}
	return end
}

// arm sets the first deadline.
func (g *guardedBody) arm() error { return g.rc.SetReadDeadline(g.deadline(0)) }

func (g *guardedBody) Read(p []byte) (int, error) {
	n, err := g.src.Read(p)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n += int64(n)
	switch {
	case err == io.EOF:
		// The body is in: net/http lifts the read deadline itself as it starts watching the
		// connection for the client going away (TestBodyDeadlineEndsWithTheBody holds it).
		g.done = true
	case errors.Is(err, os.ErrDeadlineExceeded):
		g.done = true
		return n, &BodyTimeoutError{Read: g.n, Elapsed: time.Since(g.start)}
	case err == nil && n > 0:
		_ = g.rc.SetReadDeadline(g.deadline(g.n))
	}
	return n, err
}

func (g *guardedBody) Close() error { return g.src.Close() }

// ended reports whether the body was read to its end, or failed.
func (g *guardedBody) ended() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done
}

// closeIfUnread says "Connection: close" on an answer begun before its request's body was read
// to its end (see guardBodies).
type closeIfUnread struct {
	http.ResponseWriter
	g     *guardedBody
	wrote bool
}

func (w *closeIfUnread) WriteHeader(code int) {
	w.before()
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeIfUnread) Write(p []byte) (int, error) {
	w.before()
	return w.ResponseWriter.Write(p)
}

func (w *closeIfUnread) before() {
	if w.wrote {
		return
	}
	w.wrote = true
	if !w.g.ended() {
		w.Header().Set("Connection", "close")
		lingerClose(w.ResponseWriter)
	}
}

// lingerClose has net/http end the connection after the answer as it does for a body past
// http.MaxBytesReader's limit: it sends the answer, half-closes the connection and pauses before
// closing it, without reading the body. A client still sending reads the answer instead of a
// reset. A MaxBytesReader crossed by one byte of its own (never the connection's) is the only
// way a handler has to ask for it; w must be net/http's own ResponseWriter, which guardBodies,
// the outermost handler, is given.
func lingerClose(w http.ResponseWriter) {
	var b [1]byte
	_, _ = http.MaxBytesReader(w, io.NopCloser(strings.NewReader("x")), 0).Read(b[:])
}

// Unwrap lets http.ResponseController reach the connection (flushes, deadlines).
func (w *closeIfUnread) Unwrap() http.ResponseWriter { return w.ResponseWriter }
