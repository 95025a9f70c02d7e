package store_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// smallFS mounts a tmpfs of size bytes for t, or skips: it needs root (CI runs as root).
func smallFS(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// A store on a disk that fills up: runs go on and succeed; a result lists only the artifacts
// that were kept (each one opens), and says why the others were not, naming the full disk;
// nothing the history says it has is missing.
func TestDiskFull(t *testing.T) {
	data := smallFS(t, "3m")
	skills := outSkill(t)
	s, err := sqlite.Open(t.Context(), filepath.Join(data, sqlite.FileName))
	must(t, err)
	t.Cleanup(func() { s.Close() })
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{Spool: filepath.Join(data, "spool")})
	rt, err := runtime.New(t.Context(), runtime.Config{SkillDirs: []string{skills}, NoBackgroundCheck: true, Recorder: rec, Versions: s, Artifacts: rec,
		Shared: testengine.Shared(t, runtime.SharedConfig{NoCache: true})})
	must(t, err)
	t.Cleanup(func() { rt.Close(context.Background()) })
	who := access.Local("test")
	var full, kept int
	for i := range 40 {
		res, err := rt.Run(t.Context(), run.Request{Skill: "out", Args: fmt.Appendf(nil, `{"spec":"a.bin*%d"}`, 200000+i), Who: who}) // each content another
		if err != nil || !res.Success {
			t.Fatalf("run %d on a filling disk: %v %+v", i, err, res)
		}
		for _, a := range res.Artifacts {
			rc, _, err := rt.OpenArtifact(t.Context(), who, res.RunID, a.Name)
			if err != nil {
				t.Fatalf("run %d lists %s, which does not open: %v", i, a.Name, err)
			}
			n, _ := io.Copy(io.Discard, rc)
			rc.Close()
			if n != a.Size {
				t.Fatalf("run %d: %s reads %d bytes, listed %d", i, a.Name, n, a.Size)
			}
			kept++
		}
		if len(res.Artifacts) == 0 {
			var said bool
			for _, l := range res.Logs {
				said = said || strings.Contains(l.Message, "no space left")
			}
			if !said {
				t.Fatalf("run %d kept no artifact and does not say the disk is full: %+v", i, res.Logs)
			}
			full++
		}
	}
	if full == 0 || kept == 0 {
		t.Fatalf("%d runs kept their files, %d found the disk full: the test did not fill the disk", kept, full)
	}
	st := rec.Stats()
	if st.Up || !st.Losing || !strings.Contains(st.LastError, "no space left") {
		t.Errorf("the recorder on a full disk: %+v", st)
	}
	if h := rt.Health(); h.Ready || !strings.Contains(h.Reason, "no space left") {
		t.Errorf("a runtime losing its records says it is ready: %+v", h)
	}
	t.Logf("%d artifacts kept; %d runs found the disk full; outbox %+v", kept, full, st)
}
