package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
)

// patience bounds how long these tests wait for what must happen: generous, so a loaded machine
// only makes them slower, never wrong. What they assert happens long before it.
const patience = 90 * time.Second

// rawRequest opens a connection to ts and sends a request's head (method, path, header lines)
// and the first bytes of its body, leaving the rest unsent.
func rawRequest(t *testing.T, ts *httptest.Server, head string, first string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, head+"\r\n\r\n"+first); err != nil {
		t.Fatal(err)
	}
	return conn
}

// answer reads the response on conn, within patience.
func answer(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(patience))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// closed reports whether the server closed conn (a read ends) within patience.
func closed(conn net.Conn) bool {
	_ = conn.SetReadDeadline(time.Now().Add(patience))
	_, err := io.Copy(io.Discard, conn)
	ne, timeout := err.(net.Error)
	return !(timeout && ne.Timeout())
}

// A body that trickles in is cut at BodyTimeout: answered 408 body_timeout, the connection
// closed, while the client is still sending (it would for minutes).
func TestSlowBodyIsCut(t *testing.T) {
	env := watEnv(t, Options{BodyTimeout: 300 * time.Millisecond}, 1000)
	conn := rawRequest(t, env.ts, "POST /v1/skills/echo/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4000", `{"args":`)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a byte every 100 ms: 4000 bytes would take 400 s
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	resp, body := answer(t, conn)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, `"code":"body_timeout"`) || !resp.Close {
		t.Errorf("%d %q (close %v), want 408 body_timeout and the connection closed", resp.StatusCode, body, resp.Close)
	}
	if !closed(conn) {
		t.Error("the connection stayed open")
	}
}

// A refusal does not wait for the body: a request without its key is answered 401 at once,
// though its client sent none of the body it announced, and the connection is closed rather
// than read to the body's end.
func TestRefusalDoesNotReadTheBody(t *testing.T) {
	key := strings.Repeat("k", 32)
	env := watEnv(t, Options{Keys: []APIKey{{Name: "ops", Key: key, Role: access.RoleAdmin}}}, 1000)
	for _, path := range []string{"/v1/skills/echo/runs", "/v1/skills", "/no/such/route"} {
		conn := rawRequest(t, env.ts, "POST "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100", "")
		resp, _ := answer(t, conn)
		if resp.StatusCode < 400 || !resp.Close {
			t.Errorf("%s: %d (close %v), want a refusal that closes the connection", path, resp.StatusCode, resp.Close)
		}
		if !closed(conn) {
			t.Errorf("%s: the connection stayed open, waiting for the body", path)
		}
	}
}

// Once the body is in, its deadline is lifted: a handler that takes several times BodyTimeout
// after reading it keeps its connection and its request's context.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	const timeout = 200 * time.Millisecond
	h := guardBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		select {
		case <-time.After(5 * timeout):
		case <-r.Context().Done():
			http.Error(w, "the request's context ended: "+r.Context().Err().Error(), 500)
			return
		}
		fmt.Fprintf(w, "read %d", len(data))
	}), timeout, 1<<10)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	resp, err := http.Post(ts.URL, "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "read 5" {
		t.Errorf("%d %q, want the handler's answer after the body's deadline", resp.StatusCode, body)
	}
}
