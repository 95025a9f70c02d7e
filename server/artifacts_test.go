package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// artifactSkills writes a Python skill that leaves every byte value in a binary file and a
// page of HTML with a script in its output, and the WAT one that writes as its spec says.
func artifactSkills(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	output := `"permissions":{"files":[{"path":"/output","access":"read-write"}]}`
	fixture(t, dir, "page", manifestJSON("page", output), "", map[string]string{"execute.py": `import os

def execute(args, ctx):
    os.makedirs("/output/site", exist_ok=True)
    with open("/output/site/index.html", "w") as f:
        f.write("<script>document.cookie</script>")
    with open("/output/all.bin", "wb") as f:
        f.write(bytes(range(256)) * 4)
    return "done"
`})
	fixture(t, dir, "out", manifestJSON("out", `"parameters":{"spec":{"type":"string","required":true}},`+output), "output", nil)
	return dir
}

// allBytes is what the page skill writes to all.bin.
func allBytes() string {
	b := make([]byte, 0, 1024)
	for range 4 {
		for i := range 256 {
			b = append(b, byte(i))
		}
	}
	return string(b)
}

// A run's files download byte for byte over a real loopback server, from a store or from what
// a runtime without one keeps, as attachments that cannot render in the API's origin; the SSE
// stream announces each as event: file before the result; a 404 says whether the run or the
// file is missing.
func TestArtifactDownload(t *testing.T) {
	t.Parallel()
	for _, withStore := range []bool{false, true} {
		cfg := runtime.Config{}
		if withStore {
			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			rec := storetest.NewRecorder(t, s, store.RecorderOptions{})
			cfg.Recorder, cfg.Artifacts = rec, rec
		}
		env := newEnvRuntime(t, Options{}, cfg, artifactSkills(t))
		var res run.Result
		post(t, env.ts.URL+"/v1/runs", `{"skill":"page"}`).decode(t, &res)
		if !res.Success || len(res.Artifacts) != 2 {
			t.Fatalf("store %v: %+v", withStore, res)
		}
		base := env.ts.URL + "/v1/runs/" + res.RunID + "/artifacts/"
		bin := get(t, base+"all.bin")
		sum := sha256.Sum256([]byte(allBytes()))
		if bin.status != 200 || string(bin.body) != allBytes() || bin.header.Get("Content-Length") != "1024" ||
			bin.header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"` {
			t.Errorf("store %v: all.bin: %d, %d bytes, %v", withStore, bin.status, len(bin.body), bin.header)
		}
		page := get(t, base+"site/index.html")
		h := page.header
		if string(page.body) != "<script>document.cookie</script>" || h.Get("Content-Type") != "text/html; charset=utf-8" ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Disposition") != `attachment; filename=index.html` ||
			!strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("store %v: index.html: %q %v", withStore, page.body, h)
		}
		if r := get(t, base+"all.bin", "If-None-Match", bin.header.Get("ETag")); r.status != 304 || len(r.body) != 0 {
			t.Errorf("If-None-Match: %d %q", r.status, r.body)
		}
		if e := wantError(t, get(t, base+"nosuch.txt"), 404, "not_found"); !strings.Contains(e.Error.Message, `left no file "nosuch.txt"`) {
			t.Errorf("a missing file: %s", e.Error.Message)
		}
		if e := wantError(t, get(t, env.ts.URL+"/v1/runs/run_nosuch/artifacts/a.txt"), 404, "not_found"); !strings.Contains(e.Error.Message, `no run "run_nosuch"`) {
			t.Errorf("a missing run: %s", e.Error.Message)
		}
		wantError(t, get(t, base+"site/..%2F..%2Fetc%2Fpasswd"), 400, "bad_path")
	}
}

// The SSE stream of a run carries one event: file per artifact, before its result.
func TestArtifactEventsInTheStream(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{}, artifactSkills(t))
	resp := stream(t, context.Background(), env.ts.URL+"/v1/runs", `{"skill":"out","input":{"spec":"a.txt*3;b/c.txt*2"}}`)
	defer resp.Body.Close()
	var kinds []string
	var files []artifact.Artifact
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kinds = append(kinds, k)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok && kinds[len(kinds)-1] == "file" {
			var e run.Event
			if err := json.Unmarshal([]byte(d), &e); err != nil || e.File == nil {
				t.Fatalf("file event %s: %v", d, err)
			}
			files = append(files, *e.File)
		}
	}
	if got := strings.Join(kinds, ","); got != "status,status,file,file,result" {
		t.Fatalf("events %s", got)
	}
	if files[0].Name != "a.txt" || files[0].Size != 3 || files[1].Name != "b/c.txt" || files[1].MediaType != "text/plain; charset=utf-8" {
		t.Errorf("files %+v", files)
	}
}

// A run whose files pass the store's quota answers 507 quota_exceeded.
func TestArtifactQuotaExceeded(t *testing.T) {
	t.Parallel()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{MaxArtifactBytes: 4})
	env := newEnvRuntime(t, Options{}, runtime.Config{Artifacts: rec}, artifactSkills(t))
	e := wantError(t, post(t, env.ts.URL+"/v1/runs", `{"skill":"out","input":{"spec":"a.txt*5"}}`), 507, "quota_exceeded")
	if !strings.Contains(e.Error.Message, "1 files (5 bytes) were not kept") {
		t.Errorf("message %q", e.Error.Message)
	}
}

// A run's answer says how it ended (status), each artifact has the URL that downloads it (its
// name escaped), and the run's record lists its artifacts the same way, with a store and
// without one; a failed run's status is failed. These are the shapes open-skills clients read.
func TestRunsCarryStatusAndArtifactURLs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	output := `"permissions":{"files":[{"path":"/output","access":"read-write"}]}`
	fixture(t, dir, "report", manifestJSON("report", `"parameters":{"fail":{"type":"boolean"}},`+output), "", map[string]string{"execute.py": `import os

def execute(args, ctx):
    os.makedirs("/output/q?a", exist_ok=True)
    with open("/output/q?a/my report #1.txt", "w") as f:
        f.write("report")
    if args.get("fail"):
        raise ValueError("asked to fail")
    return "done"
`})
	for _, withStore := range []bool{false, true} {
		cfg, opts := runtime.Config{}, Options{}
		var s store.Store
		if withStore {
			var err error
			if s, err = sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			rec := storetest.NewRecorder(t, s, store.RecorderOptions{})
			cfg.Recorder, cfg.Artifacts, opts.History = rec, rec, s
		}
		env := newEnvRuntime(t, opts, cfg, dir)
		var res run.Result
		post(t, env.ts.URL+"/v1/runs", `{"skill":"report"}`).decode(t, &res)
		if s != nil { // the record read back is the store's, not the runtime's recent run
			waitFor(hangGuard, func() bool { r, err := s.FindRun(t.Context(), res.RunID); return err == nil && r.Status.Final() })
		}
		want := "/v1/runs/" + res.RunID + "/artifacts/q%3Fa/my%20report%20%231.txt"
		if res.Status != run.StatusSucceeded || len(res.Artifacts) != 1 || res.Artifacts[0].URL != want {
			t.Fatalf("store %v: %+v, want status succeeded and url %s", withStore, res, want)
		}
		if r := get(t, env.ts.URL+res.Artifacts[0].URL); r.status != 200 || string(r.body) != "report" {
			t.Errorf("store %v: GET its url: %d %q", withStore, r.status, r.body)
		}
		var rec struct {
			Status    string              `json:"status"`
			Artifacts []artifact.Artifact `json:"artifacts"`
		}
		get(t, env.ts.URL+"/v1/runs/"+res.RunID).decode(t, &rec)
		if rec.Status != "succeeded" || len(rec.Artifacts) != 1 || rec.Artifacts[0].URL != want || rec.Artifacts[0].Size != 6 {
			t.Errorf("store %v: the run's record %+v", withStore, rec)
		}
		var failed run.Result
		post(t, env.ts.URL+"/v1/runs", `{"skill":"report","input":{"fail":true}}`).decode(t, &failed)
		if failed.Success || failed.Status != run.StatusFailed || len(failed.Artifacts) != 1 || failed.Artifacts[0].URL == "" {
			t.Errorf("store %v: a failed run: %+v", withStore, failed)
		}
	}
}

// The SSE stream links each artifact: its file event and the result's list carry the URL.
func TestArtifactEventsCarryTheirURL(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{}, artifactSkills(t))
	resp := stream(t, context.Background(), env.ts.URL+"/v1/runs", `{"skill":"out","input":{"spec":"a.txt*3"}}`)
	defer resp.Body.Close()
	var urls []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e run.Event
		if err := json.Unmarshal([]byte(d), &e); err != nil {
			t.Fatal(err)
		}
		if e.File != nil {
			urls = append(urls, e.File.URL)
		}
		if e.Result != nil {
			if e.Result.Status != run.StatusSucceeded || len(e.Result.Artifacts) != 1 {
				t.Fatalf("result %+v", e.Result)
			}
			urls = append(urls, e.Result.Artifacts[0].URL)
		}
	}
	if len(urls) != 2 || urls[0] == "" || urls[0] != urls[1] || !strings.HasSuffix(urls[0], "/artifacts/a.txt") {
		t.Errorf("urls %q", urls)
	}
}
