package mcpserver_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skillbox-dev/skillbox/mcpserver"
)

// The MCP Skills extension over the real transports: raw JSON-RPC, since the SDK's client has no
// way to call a method it does not know.

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// rpc is a transport-neutral way to send one request and get its response.
type rpc func(t *testing.T, method string, params any) map[string]any

var rpcID atomic.Int64

// request is a JSON-RPC request of method with params (nil: none), and its id.
func request(method string, params any) (string, float64) {
	id := rpcID.Add(1) + 100
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	data, _ := json.Marshal(msg)
	return string(data), float64(id)
}

func result(t *testing.T, resp map[string]any) map[string]any {
	t.Helper()
	r, ok := resp["result"].(map[string]any)
	if !ok {
		t.Fatalf("response %v has no result", resp)
	}
	return r
}

func rpcError(t *testing.T, resp map[string]any, code int, want string) {
	t.Helper()
	e, _ := resp["error"].(map[string]any)
	if e == nil || e["code"] != float64(code) {
		t.Fatalf("response %v: want error %d", resp, code)
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, want) {
		t.Errorf("error message %q does not say %q", msg, want)
	}
}

// checkSkillsExtension runs the extension's checks over call: the listing, every file it lists
// read back and checked against its digest and size, skills/get, and the errors.
func checkSkillsExtension(t *testing.T, e *env, call rpc) {
	list := result(t, call(t, "skills/list", map[string]any{}))
	if list["resultType"] != "complete" || list["ttlMs"] != 0.0 || list["cacheScope"] != "public" || list["nextCursor"] != nil {
		t.Errorf("skills/list result fields: %v", list)
	}
	byURI := map[string]map[string]any{}
	var uris []string
	for _, s := range list["skills"].([]any) {
		entry := s.(map[string]any)
		byURI[entry["uri"].(string)] = entry
		uris = append(uris, entry["uri"].(string))
	}
	// Only skills with a SKILL.md that follows the Agent Skills specification: not echo (no
	// SKILL.md), not renamed (its name is not its id), not sloppy (YAML only a lenient reader
	// takes). Every bundled skill with a SKILL.md is listed: each must follow the specification.
	want := []string{"skill://guide/SKILL.md", "skill://rich/SKILL.md"}
	for _, id := range bundledWithSkillMD(t) {
		want = append(want, "skill://"+id+"/SKILL.md")
	}
	slices.Sort(want)
	if !slices.Equal(uris, want) {
		t.Fatalf("skills %v, want %v", uris, want)
	}
	guide := byURI["skill://guide/SKILL.md"]
	if fm, _ := json.Marshal(guide["frontmatter"]); string(fm) != `{"description":"How to write a guide. Use it when the user asks for one.","name":"guide"}` {
		t.Errorf("guide frontmatter %s", fm)
	}
	// The frontmatter is the file's, whole: fields Skillbox does not know, values as written.
	if fm, _ := json.Marshal(byURI["skill://rich/SKILL.md"]["frontmatter"]); string(fm) != `{"allowed-tools":"Read Grep","description":"Rich.\n","license":"MIT","metadata":{"version":"010"},"name":"rich","released":"2024-01-01"}` {
		t.Errorf("rich frontmatter %s", fm)
	}
	var files []string
	for _, r := range guide["resources"].([]any) {
		res := r.(map[string]any)
		files = append(files, res["uri"].(string))
		rel := strings.TrimPrefix(res["uri"].(string), "skill://guide/")
		disk, err := os.ReadFile(filepath.Join(e.dir, "guide", rel))
		if err != nil {
			t.Fatal(err)
		}
		if res["digest"] != sha(disk) || res["size"] != float64(len(disk)) {
			t.Errorf("%s: digest %v size %v, want %s %d", rel, res["digest"], res["size"], sha(disk), len(disk))
		}
		// What resources/read serves is what the entry describes, byte for byte.
		read := result(t, call(t, "resources/read", map[string]any{"uri": res["uri"]}))
		c := read["contents"].([]any)[0].(map[string]any)
		var served []byte
		if text, ok := c["text"].(string); ok {
			served = []byte(text)
		} else {
			served, _ = base64.StdEncoding.DecodeString(c["blob"].(string))
		}
		if !bytes.Equal(served, disk) {
			t.Errorf("%s: resources/read serves %q, the digest is of %q", rel, served, disk)
		}
	}
	if !slices.Equal(files, []string{"skill://guide/SKILL.md", "skill://guide/data/blob.bin", "skill://guide/reference/api.md"}) {
		t.Errorf("guide's resources %v: want SKILL.md and every listed file, no hidden file, no symlink out", files)
	}

	got := result(t, call(t, "skills/get", map[string]any{"uri": "skill://guide/SKILL.md"}))
	if a, b := fmt.Sprint(got["skill"]), fmt.Sprint(guide); a != b || got["resultType"] != "complete" || got["cacheScope"] != "public" {
		t.Errorf("skills/get %v, want the listing's entry %v", got, guide)
	}
	for _, c := range []struct {
		params any
		want   string
	}{
		{map[string]any{"uri": "skill://nope/SKILL.md"}, "No skill is served at skill://nope/SKILL.md"},
		{map[string]any{"uri": "skill://echo/SKILL.md"}, "no SKILL.md"},
		{map[string]any{"uri": "skill://renamed/SKILL.md"}, `the name "other-name" differs from the skill's id "renamed"`},
		{map[string]any{"uri": "skill://sloppy/SKILL.md"}, "mapping values are not allowed"},
		{map[string]any{"uri": "skill://guide/reference/api.md"}, "is not the URI of a skill's SKILL.md"},
		{map[string]any{"uri": "skill://../SKILL.md"}, "names no skill"},
		{map[string]any{"uri": "https://example.com/SKILL.md"}, "not a skill:// URI"},
		{map[string]any{"uri": 42}, "params"},
		{map[string]any{}, "params.uri is required"},
		{nil, "params.uri is required"},
		{[]any{"skill://guide/SKILL.md"}, "params"},
		{map[string]any{"uri": "skill://guide/" + strings.Repeat("a", 9000)}, "longer than"},
	} {
		rpcError(t, call(t, "skills/get", c.params), -32602, c.want)
	}
	rpcError(t, call(t, "skills/list", map[string]any{"cursor": "not a cursor"}), -32602, "is not a cursor this server gave")
	rpcError(t, call(t, "skills/list", map[string]any{"cursor": 3}), -32602, "params")
	rpcError(t, call(t, "skills/list", "x"), -32602, "params")
}

// skillsEnv is newEnv with three more instruction skills: rich (a frontmatter with fields and
// values Skillbox's own reader reads differently), renamed (a name that is not its id) and
// sloppy (an unquoted ": " in its description).
func skillsEnv(t *testing.T) *env {
	e := newEnv(t, mcpserver.Options{})
	writeFile(t, filepath.Join(e.dir, "rich", "SKILL.md"), "---\nname: rich\ndescription: >\n  Rich.\nlicense: MIT\nallowed-tools: Read Grep\nreleased: 2024-01-01\nmetadata:\n  version: \"010\"\n---\n\n# Rich\n")
	writeFile(t, filepath.Join(e.dir, "renamed", "SKILL.md"), "---\nname: other-name\ndescription: A skill named unlike its directory.\n---\n")
	writeFile(t, filepath.Join(e.dir, "sloppy", "SKILL.md"), "---\nname: sloppy\ndescription: Use it: always\n---\n")
	if err := e.rt.Reload(testContext(t)); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSkillsExtensionStdio(t *testing.T) {
	t.Parallel()
	e := skillsEnv(t)
	c := startStdio(t, e.srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/skills":{}}},"clientInfo":{"name":"test","version":"1"}}}`)
	init := c.next()
	caps := init["result"].(map[string]any)["capabilities"].(map[string]any)
	if ext, _ := caps["extensions"].(map[string]any); ext == nil || fmt.Sprint(ext[mcpserver.SkillsExtension]) != "map[]" || caps["resources"] == nil {
		t.Fatalf("capabilities %v: want extensions.%s = {} beside resources", caps, mcpserver.SkillsExtension)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	checkSkillsExtension(t, e, func(t *testing.T, method string, params any) map[string]any {
		t.Helper()
		line, id := request(method, params)
		c.send(line)
		resp := c.next()
		if resp["id"] != id {
			t.Fatalf("response %v to request %v", resp, id)
		}
		return resp
	})
	// A request of the stateless protocol carries its version in _meta, and its result names the
	// server, as every result of that protocol does.
	line, _ := request("skills/get", map[string]any{"uri": "skill://hello/SKILL.md", "_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
	c.send(line)
	meta, _ := result(t, c.next())["_meta"].(map[string]any)
	if info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any); info["name"] != "skillbox" {
		t.Errorf("_meta of a 2026-07-28 result: %v", meta)
	}
	// The session goes on as before.
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"skill_echo","arguments":{"text":"hi"}}}`)
	if res := c.next(); res["id"] != 3.0 || res["error"] != nil {
		t.Fatalf("tools/call after the extension's requests: %v", res)
	}
	if err := c.end(); err != nil {
		t.Errorf("RunStdio: %v", err)
	}
}

// httpRPC posts one JSON-RPC message to the MCP endpoint at url with headers, and returns the
// HTTP response and the JSON-RPC response in it (nil for none), read from JSON or an event
// stream.
func httpRPC(t *testing.T, url, body string, headers map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return resp, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 32<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(line)
			}
		}
	}
	var msg map[string]any
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &msg); err != nil {
			t.Fatalf("response %q: %v", data, err)
		}
	}
	return resp, msg
}

func TestSkillsExtensionStreamableHTTP(t *testing.T) {
	t.Parallel()
	e := skillsEnv(t)
	hs := httptest.NewServer(e.srv.Handler())
	defer hs.Close()

	resp, init := httpRPC(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`, nil)
	session := resp.Header.Get("Mcp-Session-Id")
	caps := result(t, init)["capabilities"].(map[string]any)
	if ext, _ := caps["extensions"].(map[string]any); session == "" || ext[mcpserver.SkillsExtension] == nil {
		t.Fatalf("initialize: session %q, capabilities %v", session, caps)
	}
	headers := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
	if resp, _ := httpRPC(t, hs.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s", resp.Status)
	}
	checkSkillsExtension(t, e, func(t *testing.T, method string, params any) map[string]any {
		t.Helper()
		line, id := request(method, params)
		resp, msg := httpRPC(t, hs.URL, line, headers)
		if resp.StatusCode != http.StatusOK || msg["id"] != id {
			t.Fatalf("%s: %s %v", method, resp.Status, msg)
		}
		if strings.HasPrefix(method, "skills/") && resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s answered as %s", method, resp.Header.Get("Content-Type"))
		}
		return msg
	})

	// What the SDK refuses, the extension refuses alike.
	list, _ := request("skills/list", nil)
	for _, c := range []struct {
		name    string
		headers map[string]string
		status  int
		want    string
	}{
		{"no session", map[string]string{}, http.StatusBadRequest, "Mcp-Session-Id"},
		{"unknown session", map[string]string{"Mcp-Session-Id": "nope"}, http.StatusNotFound, "session not found"},
		{"unsupported version", map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "1999-01-01"}, http.StatusBadRequest, "Unsupported protocol version"},
		{"Accept without event-stream", map[string]string{"Mcp-Session-Id": session, "Accept": "application/json"}, http.StatusBadRequest, "Accept must contain"},
		{"DNS rebinding", map[string]string{"Mcp-Session-Id": session, "Host": "evil.example"}, http.StatusForbidden, "invalid Host header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, _ := httpRPC(t, hs.URL, list, c.headers)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
				t.Errorf("%s %q, want %d saying %q", resp.Status, body, c.status, c.want)
			}
		})
	}
	// The stateless protocol has no session, and needs none.
	if resp, msg := httpRPC(t, hs.URL, list, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}); resp.StatusCode != http.StatusOK || msg["result"] == nil {
		t.Errorf("skills/list at 2026-07-28 without a session: %s %v", resp.Status, msg)
	}

	// Everything else reaches the SDK whole, a body longer than what is peeked at too.
	text := strings.Repeat("word ", 20000)
	call, _ := request("tools/call", map[string]any{"name": "skill_echo", "arguments": map[string]any{"text": text}})
	resp, msg := httpRPC(t, hs.URL, call, headers)
	if sc, _ := result(t, msg)["structuredContent"].(map[string]any); resp.StatusCode != http.StatusOK || sc["text"] != text {
		t.Fatalf("a long tools/call: %s, %d bytes back", resp.Status, len(fmt.Sprint(sc["text"])))
	}

	// A session that ended is gone for the extension too.
	del, _ := http.NewRequestWithContext(testContext(t), http.MethodDelete, hs.URL, nil)
	del.Header.Set("Mcp-Session-Id", session)
	if resp, err := http.DefaultClient.Do(del); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	if resp, _ := httpRPC(t, hs.URL, list, headers); resp.StatusCode != http.StatusNotFound {
		t.Errorf("skills/list in an ended session: %s", resp.Status)
	}
}

// TestSkillsListPages lists more skills than a page holds: every one comes exactly once, in
// order, the cursor of the last page is absent, and a skill removed between pages shifts none.
func TestSkillsListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	var want []string
	for i := range 120 {
		id := fmt.Sprintf("s%03d", i)
		writeFile(t, filepath.Join(e.dir, id, "SKILL.md"), "---\nname: "+id+"\ndescription: Skill "+id+".\n---\n")
		want = append(want, "skill://"+id+"/SKILL.md")
	}
	if err := e.rt.Reload(testContext(t)); err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, e.srv)
	c.session()
	var got []string
	var pages int
	params := map[string]any{}
	for {
		line, _ := request("skills/list", params)
		c.send(line)
		res := result(t, c.next())
		pages++
		for _, s := range res["skills"].([]any) {
			if uri := s.(map[string]any)["uri"].(string); strings.HasPrefix(uri, "skill://s") {
				got = append(got, uri)
			}
		}
		cursor, ok := res["nextCursor"].(string)
		if !ok {
			break
		}
		if pages == 1 {
			// Removed after the first page: the second starts where the first ended all the same.
			if err := os.RemoveAll(filepath.Join(e.dir, "s050")); err != nil {
				t.Fatal(err)
			}
			if err := e.rt.Reload(testContext(t)); err != nil {
				t.Fatal(err)
			}
			want = slices.DeleteFunc(want, func(u string) bool { return u == "skill://s050/SKILL.md" })
		}
		params = map[string]any{"cursor": cursor}
	}
	if !slices.Equal(got, want) || pages < 3 {
		t.Errorf("%d pages of %d skills; want the %d skills, in order, once each", pages, len(got), len(want))
	}
}
