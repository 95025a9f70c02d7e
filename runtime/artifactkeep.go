package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/run"
)

// KeptArtifacts bounds the artifacts a runtime without an artifact.Store keeps of its recent
// runs, in a temporary directory of its own, so that a server without a database still serves
// downloads. Zero fields are the defaults. The oldest runs' files go first; Close removes them
// all.
type KeptArtifacts struct {
	// MaxRuns is how many runs' artifacts are kept (default 100).
	MaxRuns int
	// MaxBytes bounds the bytes kept in all (default 256 MiB). A run whose artifacts alone
	// are more is not kept.
	MaxBytes int64
}

func (k KeptArtifacts) withDefaults() KeptArtifacts {
	if k.MaxRuns <= 0 {
		k.MaxRuns = 100
	}
	if k.MaxBytes <= 0 {
		k.MaxBytes = 256 << 20
	}
	return k
}

// keeper keeps the runtime's own artifacts when Config.Artifacts is nil: like an
// artifact.Store, but it is told whom each run is visible to as it keeps the run's files, as a
// store reads it from the run's record.
type keeper struct {
	cfg    KeptArtifacts
	mu     sync.Mutex
	dir    string // made on the first run that leaves files
	runs   map[string]*keptRun
	order  []string
	bytes  int64
	seq    int
	closed bool
}

// keptRun is one run's kept artifacts: each file is at a path of the keeper's own naming.
type keptRun struct {
	arts  map[string]artifact.Artifact
	paths map[string]string
	dir   string
	bytes int64
	// visibleTo is the run's Record.VisibleTo: who alone sees it and its files ("" the tenant).
	visibleTo string
}

func newKeeper(cfg KeptArtifacts) *keeper {
	return &keeper{cfg: cfg.withDefaults(), runs: map[string]*keptRun{}}
}

// put copies the files of run runID, visible to visibleTo (Record.VisibleTo), into the keeper's
// directory, each checked against its size and sha256 as it is copied, and drops the oldest runs
// past the bounds.
func (k *keeper) put(ctx context.Context, runID, visibleTo string, files []artifact.File) error {
	var total int64
	for _, f := range files {
		total += f.Size
	}
	if total > k.cfg.MaxBytes {
		return fmt.Errorf("keep the artifacts of run %s: %d bytes, more than the %d the runtime keeps", runID, total, k.cfg.MaxBytes)
	}
	dir, err := k.runDir()
	if err != nil {
		return err
	}
	kr := &keptRun{arts: map[string]artifact.Artifact{}, paths: map[string]string{}, dir: dir, bytes: total, visibleTo: visibleTo}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			_ = os.RemoveAll(dir)
			return err
		}
		p := filepath.Join(dir, strconv.Itoa(i))
		if err := copyArtifact(p, f); err != nil {
			_ = os.RemoveAll(dir)
			return fmt.Errorf("keep artifact %q of run %s: %w", f.Name, runID, err)
		}
		kr.arts[f.Name], kr.paths[f.Name] = f.Artifact, p
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		_ = os.RemoveAll(dir)
		return run.ErrClosed
	}
	if old, ok := k.runs[runID]; ok { // a run is put once; a second put replaces the first
		k.drop(runID, old)
	}
	k.runs[runID] = kr
	k.order = append(k.order, runID)
	k.bytes += total
	for len(k.order) > k.cfg.MaxRuns || k.bytes > k.cfg.MaxBytes {
		id := k.order[0]
		k.order = k.order[1:]
		if r, ok := k.runs[id]; ok {
			k.drop(id, r)
		}
	}
	return nil
}

// drop forgets run id and removes its files (k.mu held). Its id stays in order until it comes
// first; drop is not told twice, since the run is gone from runs by then.
func (k *keeper) drop(id string, r *keptRun) {
	delete(k.runs, id)
	k.bytes -= r.bytes
	_ = os.RemoveAll(r.dir)
}

// runDir makes the directory of one run's files, and the keeper's own on first use.
func (k *keeper) runDir() (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return "", run.ErrClosed
	}
	if k.dir == "" {
		dir, err := os.MkdirTemp("", "skillbox-artifacts-")
		if err != nil {
			return "", fmt.Errorf("make the runtime's artifacts directory: %w", err)
		}
		k.dir = dir
	}
	k.seq++
	dir := filepath.Join(k.dir, strconv.Itoa(k.seq))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("make a run's artifacts directory: %w", err)
	}
	return dir, nil
}

// copyArtifact copies f's bytes to p, refusing them unless they are f's size and sha256.
func copyArtifact(p string, f artifact.File) error {
	src, err := f.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	h := newArtifactCheck(f.Artifact)
	_, err = io.Copy(io.MultiWriter(dst, h), io.LimitReader(src, f.Size+1))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = h.check()
	}
	return err
}

// open opens one kept artifact for viewer, as artifact.Store.OpenArtifact does.
func (k *keeper) open(viewer, runID, name string) (io.ReadCloser, artifact.Artifact, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, artifact.Artifact{}, run.ErrClosed
	}
	r, ok := k.runs[runID]
	if !ok || (viewer != "" && r.visibleTo != "" && r.visibleTo != viewer) {
		return nil, artifact.Artifact{}, fmt.Errorf("run %q: %w", runID, artifact.ErrNoRun)
	}
	a, ok := r.arts[name]
	if !ok {
		return nil, artifact.Artifact{}, fmt.Errorf("run %q has no artifact %q: %w", runID, name, artifact.ErrNoArtifact)
	}
	// Opened under the lock: a drop that follows cannot take the file from under it (an open
	// file outlives its removal).
	f, err := os.Open(r.paths[name])
	if err != nil {
		return nil, artifact.Artifact{}, fmt.Errorf("open artifact %q of run %q: %w", name, runID, err)
	}
	return f, a, nil
}

// close removes every kept file; the keeper answers ErrClosed afterwards.
func (k *keeper) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	if k.dir != "" {
		_ = os.RemoveAll(k.dir)
	}
	k.runs = map[string]*keptRun{}
}

// errArtifactChanged: an artifact's bytes are not those it was collected as.
var errArtifactChanged = errors.New("its bytes changed since it was collected")
