package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/internal/fileid"
	"github.com/skillbox-dev/skillbox/spec"
)

// Digester hashes skill trees, remembering each file's digest by its identity on disk (path,
// size, modification time, inode), so that checking an unchanged skill again — after a reload,
// or in another process through the index (index.go) — hashes nothing. It also remembers what
// the bounds check of each module found, by the module's content hash and the limits it was
// checked under: the same bytes under the same limits always give the same answer.
type Digester struct {
	mu sync.Mutex
	// files are the remembered file digests, by skill directory, sorted by path in it: a slice,
	// not a map, as most skills have two or three files (a map of two costs a kilobyte, and ten
	// thousand of them were half the registry's memory).
	files map[string][]fileDigest
	// modules are the remembered bounds checks (see ModuleCheck).
	modules map[ModuleKey]*ModuleCheck
	// dirty says files or modules changed since the index was last written.
	dirty bool
}

// fileDigest is one file's sha256 and the identity it was taken of.
type fileDigest struct {
	rel     string
	size    int64
	mtimeNs int64
	ino     uint64
	sum     [sha256.Size]byte
}

// is reports whether st is the file fd was taken of.
func (fd *fileDigest) is(st fs.FileInfo) bool {
	return fd.size == st.Size() && fd.mtimeNs == st.ModTime().UnixNano() && fd.ino == fileid.Inode(st)
}

// find returns the index of rel in files (sorted by rel), and whether it is there.
func find(files []fileDigest, rel string) (int, bool) {
	return slices.BinarySearchFunc(files, rel, func(f fileDigest, rel string) int { return strings.Compare(f.rel, rel) })
}

// NewDigester returns a Digester that remembers nothing yet.
func NewDigester() *Digester {
	return &Digester{files: map[string][]fileDigest{}, modules: map[ModuleKey]*ModuleCheck{}}
}

// Retain forgets the files of every skill directory not in dirs, and the checks of every module
// that is not now one of the kept directories' execute.wasm: what a scan no longer lists.
func (d *Digester) Retain(dirs map[string]bool) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	modules := map[string]bool{}
	for dir, files := range d.files {
		if !dirs[dir] {
			delete(d.files, dir)
			d.dirty = true
			continue
		}
		if i, ok := find(files, spec.ModuleFile); ok {
			modules[hex.EncodeToString(files[i].sum[:])] = true
		}
	}
	for k := range d.modules {
		if !modules[k.Hash] {
			delete(d.modules, k)
			d.dirty = true
		}
	}
}

// TreeDigest returns the digest of the skill tree at dir (see above). d may be nil (no memory).
func (d *Digester) TreeDigest(dir string) (string, error) {
	t, err := d.Walk(dir, false)
	return t.Digest, err
}

// Walk digests the skill tree at dir, through d's memory of file digests when d is not nil.
func (d *Digester) Walk(dir string, cachedOnly bool) (bundle.Tree, error) {
	var mem bundle.FileMemory
	if d != nil {
		mem = d
	}
	return bundle.Walk(dir, mem, cachedOnly)
}

// Remember keeps the digest of dir/rel, whose identity on disk st is (see bundle.FileMemory).
func (d *Digester) Remember(dir, rel string, st fs.FileInfo, sum [sha256.Size]byte) {
	fd := fileDigest{rel: rel, size: st.Size(), mtimeNs: st.ModTime().UnixNano(), ino: fileid.Inode(st), sum: sum}
	d.mu.Lock()
	defer d.mu.Unlock()
	files := d.files[dir]
	if i, ok := find(files, rel); ok {
		files[i] = fd
	} else {
		d.files[dir] = slices.Insert(files, i, fd)
	}
	d.dirty = true
}

// Known returns the remembered digest of dir/rel if st is still the file it was taken of.
func (d *Digester) Known(dir, rel string, st fs.FileInfo) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	files := d.files[dir]
	if i, ok := find(files, rel); ok && files[i].is(st) {
		return hex.EncodeToString(files[i].sum[:]), true
	}
	return "", false
}

// Module returns the remembered check of the module key names, or nil.
func (d *Digester) Module(key ModuleKey) *ModuleCheck {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.modules[key]
}

// RememberModule keeps the check of the module key names.
func (d *Digester) RememberModule(key ModuleKey, mc *ModuleCheck) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.modules[key] = mc
	d.dirty = true
}

// CachedFlat is Walk(dir, true) for a skill directory without subdirectories, from the listing
// its load made: a stat per file and no directory opened again. applicable is false when the
// listing has what only the walk handles (a subdirectory, a symlink, more files than the digest
// allows): the caller walks then.
func (d *Digester) CachedFlat(dir string, entries []fs.DirEntry, stats map[string]fs.FileInfo) (t bundle.Tree, applicable bool, err error) {
	if d == nil || entries == nil || len(entries) > bundle.MaxTreeFiles {
		return bundle.Tree{}, false, nil
	}
	top := map[string]string{}
	files := make([]bundle.TreeFile, 0, len(entries))
	var total int64
	for _, e := range entries {
		name := e.Name()
		switch typ := e.Type(); {
		case strings.HasPrefix(name, "."):
			continue
		case typ.IsDir() && name == "src":
			continue
		case typ.IsDir(), typ&fs.ModeSymlink != 0:
			return bundle.Tree{}, false, nil
		case !typ.IsRegular():
			continue // a FIFO, a device: not part of the skill (see fileSum in bundle/tree.go)
		}
		st := stats[name] // what the load stat'ed already (its manifest)
		if st == nil {
			if st, err = os.Lstat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
				return bundle.Tree{}, true, bundle.ErrNotCached // changed since the listing
			}
		}
		sum, ok := d.Known(dir, name, st)
		if !ok {
			return bundle.Tree{}, true, bundle.ErrNotCached
		}
		if total += st.Size(); total > bundle.MaxTreeBytes {
			return bundle.Tree{}, false, nil
		}
		top[name] = sum
		files = append(files, bundle.TreeFile{Rel: name, Size: st.Size(), Sum: sum})
	}
	// A directory's listing is sorted by name, which for names without "/" is the walk's order.
	return bundle.Tree{Digest: bundle.SumTree(files), Module: top[spec.ModuleFile], Top: top}, true, nil
}
