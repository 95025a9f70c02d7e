package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/diskfull"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// A run's output directory is made when the run starts and removed when it ends. In between,
// the guest writes in it through the SkillContext (bounded by hostfuncs' MountBounds) or, for
// a Python script, through open() (bounded by the WASI mount's budget); after the run, the host
// collects it. Collection trusts nothing it finds: it walks at most maxOutputEntries entries and
// maxOutputDepth levels, takes regular files only (a symlink, a FIFO, a device or a socket is
// left out and said so in the run's log: no guest API makes one, so one is a bug to hear of),
// reads each file through a bound of its own, and stops at the policy's bounds, whatever the
// guest managed to leave.

// Bounds of the walk that collects an output directory, beyond the policy's: entries that are
// not files (directories, left-out entries) cost a walk too.
const (
	maxOutputEntries = 4096
	maxOutputDepth   = 32
)

// output is one run's output directory.
type output struct {
	dir    string
	limits policy.ArtifactLimits
	root   *os.Root // open while the collected files are read (collect to close)
}

// newOutput makes a fresh, empty directory, the owner's alone (0700), for one run of a skill
// granted the output mount, and returns the run's host grant with the mount pointing at it.
func newOutput(g *policy.Grant) (*output, *hostfuncs.Grant, error) {
	dir, err := os.MkdirTemp("", "skillbox-output-")
	if err != nil {
		return nil, nil, fmt.Errorf("make the run's output directory: %w", err)
	}
	h := *g.Host()
	h.Mounts = slices.Clone(g.Host().Mounts)
	for i := range h.Mounts {
		if h.Mounts[i].Path == artifact.OutputMount {
			h.Mounts[i].Dir = dir
		}
	}
	return &output{dir: dir, limits: *g.Artifacts}, &h, nil
}

// remove deletes the directory with all the run left in it, giving back the owner's
// permissions on directories the guest took them from, when a plain RemoveAll cannot.
func (o *output) remove() {
	if o.root != nil {
		_ = o.root.Close()
	}
	if err := os.RemoveAll(o.dir); err == nil {
		return
	}
	_ = filepath.WalkDir(o.dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(o.dir)
}

// collect returns the files the run left, by name, within the policy's bounds, each with a way
// to read it again while the directory lives; notes says, one line each, what was left out.
func (o *output) collect() (files []artifact.File, notes []string, err error) {
	root, err := os.OpenRoot(o.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open the run's output directory: %w", err)
	}
	o.root = root
	w := &outputWalk{o: o, root: root}
	w.dir(".", 0)
	slices.SortFunc(w.files, func(a, b artifact.File) int { return strings.Compare(a.Name, b.Name) })
	return w.files, w.notes, nil
}

// outputWalk is one collection of an output directory.
type outputWalk struct {
	o       *output
	root    *os.Root
	entries int
	total   int64
	files   []artifact.File
	notes   []string
	stopped bool
}

func (w *outputWalk) note(format string, args ...any) {
	if len(w.notes) < 32 {
		w.notes = append(w.notes, fmt.Sprintf(format, args...))
	}
}

// dir collects the directory rel, depth levels below /output.
func (w *outputWalk) dir(rel string, depth int) {
	if depth >= maxOutputDepth {
		w.note("%s: deeper than %d levels, not collected", outputName(rel), maxOutputDepth)
		return
	}
	d, err := w.root.Open(rel)
	if err != nil {
		w.note("%s: cannot be read, not collected", outputName(rel))
		return
	}
	defer d.Close()
	for !w.stopped {
		ents, err := d.ReadDir(128)
		for _, e := range ents {
			if w.entries++; w.entries > maxOutputEntries {
				w.note("more than %d entries in /output: the rest is not collected", maxOutputEntries)
				w.stopped = true
				return
			}
			w.entry(path.Join(rel, e.Name()), e, depth)
			if w.stopped {
				return
			}
		}
		if err != nil || len(ents) == 0 {
			return
		}
	}
}

// entry collects one entry found in a directory.
func (w *outputWalk) entry(rel string, e fs.DirEntry, depth int) {
	name := outputName(rel)
	switch {
	case e.IsDir():
		w.dir(rel, depth+1)
		return
	case !e.Type().IsRegular():
		w.note("%s: not a regular file (%s), not collected", name, e.Type())
		return
	case !artifact.ValidPath(rel):
		w.note("%q: not a valid artifact name (UTF-8 without control characters or backslashes, at most %d bytes), not collected", rel, artifact.MaxNameBytes)
		return
	case int64(len(w.files)) >= w.o.limits.MaxFiles:
		w.note("%s: past maxFiles (%d), not collected", name, w.o.limits.MaxFiles)
		return
	}
	a, err := w.read(rel)
	if err != nil {
		w.note("%s: %v, not collected", name, err)
		return
	}
	if w.total+a.Size > w.o.limits.MaxTotalBytes {
		w.note("%s: past maxTotalBytes (%d), not collected", name, w.o.limits.MaxTotalBytes)
		return
	}
	w.total += a.Size
	root := w.root
	w.files = append(w.files, artifact.File{Artifact: a, Open: func() (io.ReadCloser, error) { return openRegular(root, rel) }})
}

// read hashes the regular file rel and names its media type, reading at most maxFileBytes+1.
func (w *outputWalk) read(rel string) (artifact.Artifact, error) {
	f, err := openRegular(w.root, rel)
	if err != nil {
		return artifact.Artifact{}, err
	}
	defer f.Close()
	max := w.o.limits.MaxFileBytes
	h := sha256.New()
	var head [512]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return artifact.Artifact{}, errors.New("cannot be read")
	}
	h.Write(head[:n])
	rest, err := io.Copy(h, io.LimitReader(f, max+1-int64(n)))
	if err != nil {
		return artifact.Artifact{}, errors.New("cannot be read")
	}
	size := int64(n) + rest
	if size > max {
		return artifact.Artifact{}, fmt.Errorf("more than maxFileBytes (%d)", max)
	}
	return artifact.Artifact{Name: rel, Size: size, SHA256: hex.EncodeToString(h.Sum(nil)), MediaType: mediaType(rel, head[:n])}, nil
}

// openRegular opens rel in root for reading if it is a regular file: never through a symlink
// (O_NOFOLLOW, and os.Root keeps every component inside), never blocking on a FIFO.
func openRegular(root *os.Root, rel string) (*os.File, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, errors.New("cannot be opened")
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	return f, nil
}

// mediaType is the media type of name by its extension, else sniffed from its first bytes.
func mediaType(name string, head []byte) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return http.DetectContentType(head)
}

// outputName is rel as the guest named it, for notes.
func outputName(rel string) string {
	if rel == "." {
		return artifact.OutputMount
	}
	return artifact.OutputMount + "/" + rel
}

// artifactPutTimeout bounds keeping one run's artifacts: a store that hangs must not hold the
// run (and its admission slot) forever.
const artifactPutTimeout = time.Minute

// keepOutput collects the run's output directory and keeps its files, then announces each in a
// "file" event and lists it in the result. Every admitted run's output is kept, a failed run's
// too: what a run wrote before it failed (a log, half a report) is what its author needs to see
// why, and it is bounded the same. What was left out is said in the run's log.
//
// It returns a quota_exceeded run.Error when the store has no room for the files (they are then
// neither listed nor announced); any other failure to keep them is logged, and the run keeps
// its outcome.
func (rt *Runtime) keepOutput(ctx context.Context, s *registry.Skill, o *output, call *hostfuncs.Call, res *run.Result, emit emitter) *run.Error {
	files, notes, err := o.collect()
	for _, n := range notes {
		call.Log("warn", "host", "artifact "+n)
	}
	if err != nil {
		rt.logger.Error("collect the run's output", "skill", s.ID(), "run", res.RunID, "err", err)
		call.Log("error", "host", "the run's output directory could not be collected")
		return nil
	}
	if len(files) == 0 {
		return nil
	}
	// Kept even when the caller has gone, like the run's record: the files are the run's.
	putCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), artifactPutTimeout)
	defer cancel()
	if rt.cfg.Artifacts != nil {
		err = rt.cfg.Artifacts.PutArtifacts(putCtx, res.RunID, files) // the run's record says who sees them
	} else {
		err = rt.kept.put(putCtx, res.RunID, rt.visibleTo(s), files)
	}
	if err != nil {
		var total int64
		for _, f := range files {
			total += f.Size
		}
		if errors.Is(err, run.ErrQuotaExceeded) {
			msg := fmt.Sprintf("the artifact store is at its quota: the run's %d files (%d bytes) were not kept", len(files), total)
			call.Log("error", "host", msg)
			return run.Errorf(run.KindQuotaExceeded, s.ID(), err, "%s", msg)
		}
		rt.logger.Error("keep the run's artifacts", "skill", s.ID(), "run", res.RunID, "err", diskfull.Name(err, "the run's artifacts"))
		why := "could not be kept"
		if diskfull.Is(err) {
			why = "were not kept: no space left on the device that keeps artifacts"
		}
		call.Log("error", "host", fmt.Sprintf("the run's %d files (%d bytes) %s", len(files), total, why))
		return nil
	}
	res.Artifacts = make([]artifact.Artifact, len(files))
	for i, f := range files {
		res.Artifacts[i] = f.Artifact
		a := f.Artifact
		emit.send(run.Event{Type: "file", File: &a})
	}
	return nil
}
