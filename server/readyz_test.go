package server

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// readyz is GET /readyz's body, the fields these tests read.
type readyz struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Records *struct {
		Up         bool  `json:"up"`
		Spooled    int   `json:"spooled"`
		SpoolBytes int64 `json:"spool_bytes"`
		Dropped    int   `json:"dropped"`
	} `json:"records"`
	Versions *struct {
		Up    bool `json:"up"`
		Known int  `json:"known"`
	} `json:"versions"`
	Admission struct {
		MemoryBudget int64
	} `json:"admission"`
}

func getReadyz(t *testing.T, base string) (int, readyz) {
	t.Helper()
	r := get(t, base+"/readyz")
	var body readyz
	r.decode(t, &body)
	return r.status, body
}

// /readyz reports each dependency; while the store is unreachable the replica stays ready (its
// runs go on, their records spooled) until the spool is nearly full, then answers 503 and says
// why, and /metrics counts it all.
func TestReadyzReportsTheStore(t *testing.T) {
	t.Parallel()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{MaxSpoolBytes: 8 << 10})
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", ""), "hello", nil)
	env := newEnvRuntime(t, Options{History: s}, runtime.Config{Recorder: rec, Versions: s, Artifacts: rec}, dir)
	url := env.ts.URL + "/v1/skills/hello/runs"
	runResult(t, post(t, url, `{}`))
	status, body := getReadyz(t, env.ts.URL)
	if status != http.StatusOK || body.Status != "ready" || body.Records == nil || !body.Records.Up || body.Versions == nil || !body.Versions.Up || body.Versions.Known != 1 || body.Admission.MemoryBudget == 0 {
		t.Fatalf("with the store up: %d %+v", status, body)
	}

	s.Close() // the store is gone: every read and write fails
	runResult(t, post(t, url, `{}`))
	status, body = getReadyz(t, env.ts.URL)
	if status != http.StatusOK || body.Records.Up || body.Records.Spooled == 0 {
		t.Fatalf("the store down, the spool with room: %d %+v", status, body.Records)
	}
	for i := 0; status == http.StatusOK; i++ {
		if i == 100 {
			t.Fatalf("a hundred runs, and the spool is still not nearly full: %+v", body.Records)
		}
		runResult(t, post(t, url, `{}`)) // runs go on
		status, body = getReadyz(t, env.ts.URL)
	}
	if status != http.StatusServiceUnavailable || body.Status != "not_ready" || !strings.Contains(body.Reason, "spool") {
		t.Fatalf("the spool nearly full: %d %+v", status, body)
	}
	m := metricsText(t, env.ts.URL)
	for _, want := range []string{"skillbox_store_up 0", "skillbox_ready 0", "skillbox_store_write_errors_total "} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if v, ok := metricValue(m, "skillbox_records_spooled"); !ok || v == 0 {
		t.Errorf("skillbox_records_spooled %v %v", v, ok)
	}
}
