package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
)

// The index keeps what checks learned (the digester's file digests and module checks) for the
// next process over the same skill directories, so that a fresh `skillbox list` of ten thousand
// skills reports their status from a stat of each file instead of reading every module. It is one
// file per set of skill directories, beside the compilation cache and under its rules
// (cachedir.go: a directory of the user's own, mode 0700, no symlinks), written atomically.
//
// # What it trusts
//
// A file digest is used only for a file whose path, size, modification time and inode are all
// the ones recorded with it; any other file is hashed again, so a corrupt or tampered index can
// never make a changed module look checked. A module check is used only for the content hash and
// limits it was made under. What is trusted is that the user's own cache says truly what their
// files hashed to, the same trust a rescan gives the in-memory digester: a file rewritten in place
// with its size and modification time restored is not noticed until a run compiles it. Nothing
// the index says is compiled: compiling reads the module again, checks its hash against the
// version's and bounds it again (Skill.module). An index that does not decode, or whose checksum
// does not match, is ignored whole.

// indexMagic starts the file; the version changes with its layout.
const indexMagic = "skillbox-index-v1\n"

// Bounds on the index: it is read at every start, and an old one is not worth keeping.
const (
	maxIndexBytes = 256 << 20
	indexMaxAge   = 14 * 24 * time.Hour
)

type indexData struct {
	Dirs    []indexDir
	Modules []indexModule
}

type indexDir struct {
	Dir   string
	Files []indexFile
}

type indexFile struct {
	Rel     string
	Size    int64
	MtimeNs int64
	Ino     uint64
	Sum     [sha256.Size]byte
}

type indexModule struct {
	Hash        [sha256.Size]byte
	Limits      ModuleLimits
	MemMiB      int64
	Size        int64
	Info        *wasmcheck.Info
	LinearLimit uint64
	Problem     *ManifestError
	Build       bool
}

var indexMu sync.Mutex // one write at a time, within this process

// openIndex returns the index file of this runtime's skill directories, loading what it holds
// into the digester, or "" when there is no cache directory to keep it in.
func (rt *Runtime) openIndex() string {
	if rt.cacheDir == "" || len(rt.cfg.SkillDirs) == 0 {
		return ""
	}
	dir := filepath.Join(rt.cacheDir, "index")
	if err := ensurePrivateDir(dir); err != nil {
		rt.logger.Warn("skill index off", "err", err)
		return ""
	}
	h := sha256.New()
	for _, d := range rt.cfg.SkillDirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		fmt.Fprintf(h, "%s\x00", d)
	}
	path := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:24]+".idx")
	if err := rt.checks.digests.load(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		rt.logger.Warn("skill index ignored; it will be rewritten", "path", path, "err", err)
	}
	return path
}

// saveIndex writes the index when the digester learned something since it was last written.
func (rt *Runtime) saveIndex() {
	if rt.index == "" {
		return
	}
	if err := rt.checks.digests.save(rt.index); err != nil {
		rt.logger.Warn("cannot write the skill index", "path", rt.index, "err", err)
	}
}

// load reads the index at path into d.
func (d *digester) load(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIndexBytes+1))
	if err != nil {
		return err
	}
	if len(data) > maxIndexBytes {
		return fmt.Errorf("more than %d bytes", maxIndexBytes)
	}
	rest, ok := bytes.CutPrefix(data, []byte(indexMagic))
	if !ok || len(rest) < sha256.Size {
		return errors.New("not an index of this version")
	}
	sum, payload := rest[:sha256.Size], rest[sha256.Size:]
	if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
		return errors.New("its checksum does not match")
	}
	var x indexData
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&x); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dir := range x.Dirs {
		files := make(map[string]fileDigest, len(dir.Files))
		for _, f := range dir.Files {
			files[f.Rel] = fileDigest{size: f.Size, mtime: time.Unix(0, f.MtimeNs), ino: f.Ino, sum: hex.EncodeToString(f.Sum[:])}
		}
		d.files[dir.Dir] = files
	}
	for _, m := range x.Modules {
		if (m.Info == nil) == (m.Problem == nil) {
			continue // a check has one or the other
		}
		key := moduleKey{hash: hex.EncodeToString(m.Hash[:]), limits: m.Limits, memMiB: m.MemMiB}
		d.modules[key] = &moduleCheck{size: m.Size, info: m.Info, linearLimit: m.LinearLimit, problem: m.Problem, build: m.Build}
	}
	return nil
}

// save writes d to path if it changed since it was loaded or last saved: to a temporary file in
// the same directory, renamed over the old one, so that a reader never sees half of it. It also
// removes the indexes of other skill directories that no process used for indexMaxAge.
func (d *digester) save(path string) error {
	indexMu.Lock()
	defer indexMu.Unlock()
	x, changed := d.snapshot()
	if !changed {
		return nil
	}
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(x); err != nil {
		return err
	}
	sum := sha256.Sum256(payload.Bytes())
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	_, err = tmp.Write(append(append([]byte(indexMagic), sum[:]...), payload.Bytes()...))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		d.mu.Lock()
		d.dirty = true // try again next time
		d.mu.Unlock()
		return err
	}
	removeStaleIndexes(filepath.Dir(path))
	return nil
}

// snapshot copies d for saving and marks it clean; changed is false when it was clean.
func (d *digester) snapshot() (x indexData, changed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dirty {
		return x, false
	}
	d.dirty = false
	for dir, files := range d.files {
		e := indexDir{Dir: dir, Files: make([]indexFile, 0, len(files))}
		for rel, f := range files {
			sum, err := hex.DecodeString(f.sum)
			if err != nil || len(sum) != sha256.Size {
				continue
			}
			e.Files = append(e.Files, indexFile{Rel: rel, Size: f.size, MtimeNs: f.mtime.UnixNano(), Ino: f.ino, Sum: [sha256.Size]byte(sum)})
		}
		x.Dirs = append(x.Dirs, e)
	}
	for k, m := range d.modules {
		hash, err := hex.DecodeString(k.hash)
		if err != nil || len(hash) != sha256.Size {
			continue
		}
		im := indexModule{Hash: [sha256.Size]byte(hash), Limits: k.limits, MemMiB: k.memMiB, Size: m.size, LinearLimit: m.linearLimit, Problem: m.problem, Build: m.build}
		if m.info != nil {
			info := *m.info
			info.NamesError = nil // an interface gob cannot carry; nothing reads it after the check
			im.Info = &info
		}
		x.Modules = append(x.Modules, im)
	}
	return x, true
}

// removeStaleIndexes removes the index files in dir that were not written for indexMaxAge: those
// of skill directories no longer used (tests make many).
func removeStaleIndexes(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".idx") || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > indexMaxAge {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
