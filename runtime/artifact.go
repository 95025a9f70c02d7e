package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// ArtifactsPolicy bounds the output directory of every run. The zero value is the defaults:
// the output mount on, each run at most 16 files of 8 MiB each and 32 MiB in all.
//
// The mount is on by default, unlike a directory of the host, because it exposes nothing of
// the host: it is empty when the run starts, private to the run, bounded, and removed after it;
// a skill still has to ask for it in its manifest, and a new version that starts asking is a
// new permission (see docs/versions.md).
type ArtifactsPolicy struct {
	// Disabled refuses the output mount to every skill (a refusal line in each grant that asks).
	// In a policy file: artifacts: {enabled: false}.
	Disabled bool
	// MaxFiles bounds the files a run may leave (default 16).
	MaxFiles int64
	// MaxFileBytes bounds each file (default 8 MiB, at most 256 MiB: a store holds a file in
	// memory while it keeps or serves it).
	MaxFileBytes int64
	// MaxTotalBytes bounds all of a run's files together (default 32 MiB, at most 1 GiB).
	MaxTotalBytes int64
}

// The defaults and ceilings of ArtifactsPolicy.
const (
	DefaultArtifactFiles      = 16
	DefaultArtifactFileBytes  = 8 << 20
	DefaultArtifactTotalBytes = 32 << 20
	maxArtifactFiles          = 4096
	maxArtifactFileBytes      = 256 << 20
	maxArtifactTotalBytes     = 1 << 30
)

// withDefaults fills a's zero bounds.
func (a ArtifactsPolicy) withDefaults() ArtifactsPolicy {
	if a.MaxFiles <= 0 {
		a.MaxFiles = DefaultArtifactFiles
	}
	if a.MaxFileBytes <= 0 {
		a.MaxFileBytes = DefaultArtifactFileBytes
	}
	if a.MaxTotalBytes <= 0 {
		a.MaxTotalBytes = DefaultArtifactTotalBytes
	}
	return a
}

// ArtifactLimits are the bounds of a granted output mount, as a grant shows them.
type ArtifactLimits struct {
	MaxFiles      int64 `json:"maxFiles"`
	MaxFileBytes  int64 `json:"maxFileBytes"`
	MaxTotalBytes int64 `json:"maxTotalBytes"`
}

// artifactsPolicy reads a policy file's artifacts section.
func artifactsPolicy(c *spec.Checker, obj spec.Doc) ArtifactsPolicy {
	c.Known(obj, "artifacts", "enabled", "maxFiles", "maxFileBytes", "maxTotalBytes")
	a := ArtifactsPolicy{
		MaxFiles:      c.Int(obj, "artifacts", "maxFiles", maxArtifactFiles),
		MaxFileBytes:  c.Int(obj, "artifacts", "maxFileBytes", maxArtifactFileBytes),
		MaxTotalBytes: c.Int(obj, "artifacts", "maxTotalBytes", maxArtifactTotalBytes),
	}
	if _, set := obj["enabled"]; set {
		a.Disabled = !c.Bool(obj, "artifacts", "enabled")
	}
	return a
}

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

// OpenArtifact reads the artifact name of run runID: from Config.Artifacts when the runtime has
// one, else from what it keeps of its recent runs (see KeptArtifacts).
//
// # Errors
//
// [ErrNoArtifact] when the run left no file of that name, or is a recent run of this runtime
// the store does not know; [ErrNoRun] when neither knows the run; [ErrClosed] after Close.
func (rt *Runtime) OpenArtifact(ctx context.Context, runID, name string) (io.ReadCloser, artifact.Artifact, error) {
	rt.closeMu.RLock()
	closed := rt.closed
	rt.closeMu.RUnlock()
	if closed {
		return nil, artifact.Artifact{}, run.ErrClosed
	}
	if !artifact.ValidName(name) {
		return nil, artifact.Artifact{}, fmt.Errorf("run %q has no artifact %q (not an artifact name): %w", runID, name, artifact.ErrNoArtifact)
	}
	var st artifact.Store = rt.kept
	if rt.cfg.Artifacts != nil {
		st = rt.cfg.Artifacts
	}
	rc, a, err := st.OpenArtifact(ctx, runID, name)
	if errors.Is(err, artifact.ErrNoRun) {
		if _, ok := rt.history.get(runID); ok {
			return nil, artifact.Artifact{}, fmt.Errorf("run %q has no artifact %q: %w", runID, name, artifact.ErrNoArtifact)
		}
	}
	return rc, a, err
}
