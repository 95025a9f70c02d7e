package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/run"
)

// artifactCheck hashes bytes as they are written, to check they are an artifact's.
type artifactCheck struct {
	a    artifact.Artifact
	h    hash.Hash
	size int64
}

func newArtifactCheck(a artifact.Artifact) *artifactCheck {
	return &artifactCheck{a: a, h: sha256.New()}
}

func (c *artifactCheck) Write(p []byte) (int, error) {
	c.size += int64(len(p))
	return c.h.Write(p)
}

// check fails unless the bytes written were the artifact's size and sha256.
func (c *artifactCheck) check() error {
	if c.size != c.a.Size || hex.EncodeToString(c.h.Sum(nil)) != c.a.SHA256 {
		return errArtifactChanged
	}
	return nil
}

// OpenArtifact reads the artifact name of run runID for who: from Config.Artifacts when the
// runtime has one, else from what it keeps of its recent runs (see KeptArtifacts). who sees a
// run's files as it sees the run (access.Principal.Sees): a user's own run's files are that
// user's and the admins'.
//
// # Errors
//
// [artifact.ErrNoArtifact] when the run left no file of that name, or is a recent run of this
// runtime the store does not know; [artifact.ErrNoRun] when neither knows a run of that id who
// sees; [run.ErrClosed] after Close.
func (rt *Runtime) OpenArtifact(ctx context.Context, who access.Principal, runID, name string) (io.ReadCloser, artifact.Artifact, error) {
	rt.closeMu.RLock()
	closed := rt.closed
	rt.closeMu.RUnlock()
	if closed {
		return nil, artifact.Artifact{}, run.ErrClosed
	}
	if !artifact.ValidName(name) {
		return nil, artifact.Artifact{}, fmt.Errorf("run %q has no artifact %q (not an artifact name): %w", runID, name, artifact.ErrNoArtifact)
	}
	var rc io.ReadCloser
	var a artifact.Artifact
	var err error
	if rt.cfg.Artifacts != nil {
		rc, a, err = rt.cfg.Artifacts.OpenArtifact(ctx, who.Viewer(), runID, name)
	} else {
		rc, a, err = rt.kept.open(who.Viewer(), runID, name)
	}
	if errors.Is(err, artifact.ErrNoRun) {
		if r, ok := rt.history.get(runID); ok && who.Sees(r.VisibleTo) {
			return nil, artifact.Artifact{}, fmt.Errorf("run %q has no artifact %q: %w", runID, name, artifact.ErrNoArtifact)
		}
	}
	return rc, a, err
}
