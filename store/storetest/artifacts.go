package storetest

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
)

// fileOf is an artifact.File over data.
func fileOf(name, media string, data []byte) artifact.File {
	sum := sha256.Sum256(data)
	return artifact.File{
		Artifact: artifact.Artifact{Name: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), MediaType: media},
		Open:     func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
	}
}

// readBack opens name of run and returns its bytes and meta.
func readBack(t *testing.T, s store.Store, run, name string) ([]byte, artifact.Artifact) {
	t.Helper()
	rc, a, err := s.OpenArtifact(t.Context(), "", run, name)
	if err != nil {
		t.Fatalf("open %s of %s: %v", name, run, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data, a
}

// blobCount counts the stored blobs, when the store exposes its database.
func blobCount(t *testing.T, s store.Store) int {
	t.Helper()
	raw, ok := s.(interface{ SQL() *sql.DB })
	if !ok {
		t.Skip("the store does not expose its database")
	}
	var n int
	if err := raw.SQL().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM blobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Artifacts come back byte for byte with their meta, survive a restart, and share one blob per
// content across runs and versions; a missing one says whether the run or the file is missing;
// bytes that are not what the file was listed with are refused, and nothing of that run kept.
func testArtifactsRoundTrip(t *testing.T, h Harness) {
	addr := h.New(t)
	s := open(t, h, addr)
	ctx := t.Context()
	shared := []byte("shared \x00\xff bytes")
	report := []byte("<html><script>alert(1)</script></html>")
	if err := s.PutArtifacts(ctx, "run_a", []artifact.File{
		fileOf("report.html", "text/html; charset=utf-8", report),
		fileOf("deep/dir/shared.bin", "application/octet-stream", shared),
		fileOf("empty", "text/plain; charset=utf-8", nil),
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutArtifacts(ctx, "run_b", []artifact.File{fileOf("copy.bin", "application/octet-stream", shared)}); err != nil {
		t.Fatal(err)
	}
	before := blobCount(t, s)
	if _, _, err := s.AddVersion(ctx, newVersion("w", "a", base), map[string][]byte{"skill.json": []byte(`{}`), "execute.wasm": shared}); err != nil {
		t.Fatal(err)
	}
	if got := blobCount(t, s); got != before+1 { // skill.json is new; the module is the artifact's blob
		t.Errorf("blobs %d after a version sharing one, want %d", got, before+1)
	}
	s.Close()
	s = open(t, h, addr)
	for _, c := range []struct {
		run, name string
		data      []byte
	}{{"run_a", "report.html", report}, {"run_a", "deep/dir/shared.bin", shared}, {"run_a", "empty", nil}, {"run_b", "copy.bin", shared}} {
		data, a := readBack(t, s, c.run, c.name)
		sum := sha256.Sum256(c.data)
		if !bytes.Equal(data, c.data) || a.Name != c.name || a.Size != int64(len(c.data)) || a.SHA256 != hex.EncodeToString(sum[:]) || a.MediaType == "" {
			t.Errorf("%s/%s: %q %+v", c.run, c.name, data, a)
		}
	}
	if _, _, err := s.OpenArtifact(ctx, "", "run_nosuch", "x"); !errors.Is(err, artifact.ErrNoRun) {
		t.Errorf("unknown run: %v, want ErrNoRun", err)
	}
	if _, _, err := s.OpenArtifact(ctx, "", "run_a", "nosuch"); !errors.Is(err, artifact.ErrNoArtifact) {
		t.Errorf("a run with artifacts, not this one: %v, want ErrNoArtifact", err)
	}
	mustFinish(t, s, finished(1, "echo", store.StatusSucceeded)) // a recorded run without artifacts
	if _, _, err := s.OpenArtifact(ctx, "", "run_000001", "x"); !errors.Is(err, artifact.ErrNoArtifact) {
		t.Errorf("a recorded run without artifacts: %v, want ErrNoArtifact", err)
	}
	// A run's record lists its artifacts by name, its tenant's only; a list leaves them out.
	mustFinish(t, s, finished(2, "echo", store.StatusSucceeded))
	if err := s.PutArtifacts(ctx, "run_000002", []artifact.File{fileOf("z.txt", "text/plain", []byte("z")), fileOf("a/b.html", "text/html", report)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Tenant("other").PutArtifacts(ctx, "run_000002", []artifact.File{fileOf("theirs.txt", "text/plain", nil)}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.FindRun(ctx, "run_000002")
	if err != nil {
		t.Fatal(err)
	}
	if as := rec.Artifacts; len(as) != 2 || as[0].Name != "a/b.html" || as[0].Size != int64(len(report)) || as[0].MediaType != "text/html" ||
		as[0].SHA256 != fileOf("", "", report).SHA256 || as[1].Name != "z.txt" {
		t.Errorf("run_000002's artifacts: %+v", as)
	}
	if rec, err := s.FindRun(ctx, "run_000001"); err != nil || rec.Artifacts != nil {
		t.Errorf("a run without artifacts lists %+v (%v)", rec.Artifacts, err)
	}
	if page, err := s.ListRuns(ctx, store.Query{}); err != nil || len(page.Runs) == 0 || page.Runs[0].Artifacts != nil {
		t.Errorf("a list of runs: %+v (%v)", page.Runs, err)
	}
	// Kept once: a second put of the same name fails and changes nothing.
	if err := s.PutArtifacts(ctx, "run_b", []artifact.File{fileOf("copy.bin", "text/plain", []byte("other"))}); err == nil {
		t.Error("a second put of copy.bin succeeded")
	}
	if data, _ := readBack(t, s, "run_b", "copy.bin"); !bytes.Equal(data, shared) {
		t.Errorf("copy.bin changed to %q", data)
	}
	lying := fileOf("a", "text/plain", []byte("what was hashed"))
	lying.Open = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("what is read")), nil }
	if err := s.PutArtifacts(ctx, "run_c", []artifact.File{fileOf("ok", "text/plain", []byte("ok")), lying}); err == nil {
		t.Error("bytes that do not match their sha256 were kept")
	}
	if _, _, err := s.OpenArtifact(ctx, "", "run_c", "ok"); !errors.Is(err, artifact.ErrNoRun) {
		t.Errorf("a refused put kept something: %v", err)
	}
	for _, bad := range []artifact.File{fileOf("../x", "text/plain", nil), fileOf("/abs", "text/plain", nil), fileOf("a//b", "text/plain", nil), fileOf("x", "", nil)} {
		if err := s.PutArtifacts(ctx, "run_d", []artifact.File{bad}); err == nil {
			t.Errorf("%q (media type %q) was kept", bad.Name, bad.MediaType)
		}
	}
}

// The quota counts each distinct content artifacts hold once: content already held costs
// nothing; past it the put is quota_exceeded and keeps nothing; Unlimited turns it off.
func testArtifactsQuota(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	sixty, fifty := bytes.Repeat([]byte("6"), 60), bytes.Repeat([]byte("5"), 50)
	put := func(run string, quota int64, files ...artifact.File) error {
		return s.PutArtifactsWithin(ctx, run, files, quota)
	}
	if err := put("run_1", 100, fileOf("a", "text/plain", sixty)); err != nil {
		t.Fatal(err)
	}
	if err := put("run_2", 100, fileOf("same", "text/plain", sixty), fileOf("again", "text/plain", sixty)); err != nil {
		t.Fatalf("content already held: %v", err)
	}
	err := put("run_3", 100, fileOf("small", "text/plain", []byte("1")), fileOf("b", "text/plain", fifty))
	if !errors.Is(err, run.ErrQuotaExceeded) || !strings.Contains(err.Error(), "quota of 100") {
		t.Fatalf("past the quota: %v, want ErrQuotaExceeded naming it", err)
	}
	if _, _, err := s.OpenArtifact(ctx, "", "run_3", "small"); !errors.Is(err, artifact.ErrNoRun) {
		t.Errorf("a refused put kept something: %v", err)
	}
	if err := put("run_3", store.Unlimited, fileOf("b", "text/plain", fifty)); err != nil {
		t.Errorf("unlimited: %v", err)
	}
	// Concurrent runs cannot pass the quota together: of eight 40-byte contents under a quota
	// of 80 more than what is held, two are kept.
	held := int64(110)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var kept, refused int
	for i := range 8 {
		wg.Go(func() {
			err := put("run_c"+string(rune('0'+i)), held+80, fileOf("f", "text/plain", bytes.Repeat([]byte{byte('a' + i)}, 40)))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				kept++
			case errors.Is(err, run.ErrQuotaExceeded):
				refused++
			default:
				t.Errorf("put %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if kept != 2 || refused != 6 {
		t.Errorf("%d kept, %d refused; want 2 and 6", kept, refused)
	}
}

// PruneRuns deletes a pruned run's artifacts with it, and every blob it held that no other
// artifact and no version holds; what others hold stays.
func testArtifactsPruned(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	module, alone, shared := []byte("module bytes"), []byte("only the old run's"), []byte("both runs'")
	if _, _, err := s.AddVersion(ctx, newVersion("w", "a", base), map[string][]byte{"execute.wasm": module}); err != nil {
		t.Fatal(err)
	}
	old, young := finished(1, "echo", store.StatusSucceeded), finished(2, "echo", store.StatusFailed)
	mustFinish(t, s, old)
	mustFinish(t, s, young)
	if err := s.PutArtifacts(ctx, old.ID, []artifact.File{fileOf("m", "x/y", module), fileOf("alone", "x/y", alone), fileOf("shared", "x/y", shared)}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutArtifacts(ctx, young.ID, []artifact.File{fileOf("shared", "x/y", shared)}); err != nil {
		t.Fatal(err)
	}
	before := blobCount(t, s)
	n, err := s.PruneRuns(ctx, store.Retention{MaxRuns: 1, MaxAge: store.Unlimited}, base)
	if err != nil || n != 1 {
		t.Fatalf("prune: %d, %v", n, err)
	}
	if _, _, err := s.OpenArtifact(ctx, "", old.ID, "alone"); !errors.Is(err, artifact.ErrNoRun) {
		t.Errorf("the pruned run's artifact: %v, want ErrNoRun", err)
	}
	if got := blobCount(t, s); got != before-1 {
		t.Errorf("blobs %d after the prune, want %d: only the pruned run's own blob goes", got, before-1)
	}
	if data, _ := readBack(t, s, young.ID, "shared"); !bytes.Equal(data, shared) {
		t.Errorf("the surviving run's artifact reads %q", data)
	}
	if files, err := s.VersionFiles(ctx, "w", testDigest("a")); err != nil || !bytes.Equal(files["execute.wasm"], module) {
		t.Errorf("the version's module: %v", err)
	}
	// By age too.
	if n, err := s.PruneRuns(ctx, store.Retention{MaxRuns: store.Unlimited, MaxAge: time.Millisecond}, base.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("prune by age: %d, %v", n, err)
	}
	if got := blobCount(t, s); got != before-2 {
		t.Errorf("blobs %d after pruning the last run, want %d", got, before-2)
	}
}
