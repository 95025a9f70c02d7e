package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/skillbox-dev/skillbox/internal/fileid"
	"github.com/skillbox-dev/skillbox/spec"
)

// A skill version's identity is the digest of its whole tree, so that any change a run could
// notice — the manifest (and so a permission), the module, the instructions, a resource — makes
// a new version. It covers every regular file of the skill's directory (symlinks that stay inside
// it are followed) except hidden ones (".git", ".env": not part of a skill, and never served) and
// the source directory src/, which only `skillbox build` reads; the module built from it is
// covered. It is computed the way sha256sum would be checked:
//
//	cd <skill> && find -L . -type f ! -path './src/*' ! -path '*/.*' | sed 's|^\./||' | LC_ALL=C sort |
//	  while IFS= read -r f; do printf '%s  %s\n' "$(sha256sum < "$f" | cut -c1-64)" "$f"; done | sha256sum
//
// (TestDigestIsTheDocumentedOne runs exactly this.)
//
// and written "sha256:<hex>".
const digestPrefix = "sha256:"

// Bounds on what a digest reads: a skill directory is untrusted input, and a scan hashes it.
const (
	maxDigestFiles = 4096
	maxDigestBytes = 512 << 20
)

// errTreeTooLarge is a skill tree over the digest's bounds.
var errTreeTooLarge = errors.New("the skill's directory is too large")

// errNotCached is a digest that would have to read a file: what a scan, which reads no module,
// gets for a skill that changed since it was last checked.
var errNotCached = errors.New("a file changed since it was last hashed")

// digester hashes skill trees, remembering each file's digest by its identity on disk (path,
// size, modification time, inode), so that checking an unchanged skill again — after a reload,
// or in another process through the index (index.go) — hashes nothing. It also remembers what
// the bounds check of each module found, by the module's content hash and the limits it was
// checked under: the same bytes under the same limits always give the same answer.
type digester struct {
	mu sync.Mutex
	// files are the remembered file digests, by skill directory, sorted by path in it: a slice,
	// not a map, as most skills have two or three files (a map of two costs a kilobyte, and ten
	// thousand of them were half the registry's memory).
	files map[string][]fileDigest
	// modules are the remembered bounds checks (see moduleCheck).
	modules map[moduleKey]*moduleCheck
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

func newDigester() *digester {
	return &digester{files: map[string][]fileDigest{}, modules: map[moduleKey]*moduleCheck{}}
}

// retain forgets the files of every skill directory not in dirs, and the checks of every module
// that is not now one of the kept directories' execute.wasm: what a scan no longer lists.
func (d *digester) retain(dirs map[string]bool) {
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
		if !modules[k.hash] {
			delete(d.modules, k)
			d.dirty = true
		}
	}
}

// tree is what a digest walk of a skill's directory found.
type tree struct {
	digest string
	// module is the sha256 of execute.wasm as the walk found it ("" when it is not a regular file
	// of the tree): the module's hash, unless the file changes before it is read.
	module string
	// top holds the sha256 of each file directly in the skill's directory, by name.
	top map[string]string
	// files are the files the digest covers, sorted by path (only from walk).
	files []treeFile
}

// treeFile is one file a tree digest covers: its slash path in the skill, size and sha256 (hex).
type treeFile struct {
	rel  string
	size int64
	sum  string
}

// sumTree is the tree digest of files (sorted by rel): the one place its formula is written.
func sumTree(files []treeFile) string {
	h := sha256.New()
	for _, f := range files {
		h.Write([]byte(f.sum + "  " + f.rel + "\n"))
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil))
}

// treeDigest returns the digest of the skill tree at dir (see above). d may be nil (no memory).
func (d *digester) treeDigest(dir string) (string, error) {
	t, err := d.walk(dir, false)
	return t.digest, err
}

// walk digests the skill tree at dir. cachedOnly reads no file: a file whose identity is not
// remembered ends the walk with errNotCached.
func (d *digester) walk(dir string, cachedOnly bool) (tree, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return tree{}, err
	}
	defer root.Close()
	var entries []treeFile
	var total int64
	top := map[string]string{}
	err = fs.WalkDir(root.FS(), ".", func(rel string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") || rel == "src" {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			return nil
		}
		if len(entries) >= maxDigestFiles {
			return fmt.Errorf("%w: more than %d files outside src/ (keep build outputs under src/ or in hidden directories)", errTreeTooLarge, maxDigestFiles)
		}
		sum, size, err := d.fileSum(root, dir, rel, e, cachedOnly)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if sum == "" {
			return nil // not a regular file, nor a symlink to one
		}
		if total += size; total > maxDigestBytes {
			return fmt.Errorf("%w: more than %d bytes outside src/", errTreeTooLarge, maxDigestBytes)
		}
		rel = path.Clean(rel)
		if !strings.Contains(rel, "/") {
			top[rel] = sum
		}
		entries = append(entries, treeFile{rel, size, sum})
		return nil
	})
	if err != nil {
		return tree{}, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })
	return tree{digest: sumTree(entries), module: top[spec.ModuleFile], top: top, files: entries}, nil
}

// fileSum hashes one file of the tree, through root so that no symlink leads out of it, without
// blocking on a FIFO. It returns "" for what is not part of the skill: not a regular file, a
// symlink that leads out of the directory or nowhere, a file the host may not read — none of
// which a run or a client can read either. A file whose identity is remembered is not opened:
// a stat tells, so checking an unchanged tree costs a stat per file.
func (d *digester) fileSum(root *os.Root, dir, rel string, e fs.DirEntry, cachedOnly bool) (string, int64, error) {
	if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
		return "", 0, nil
	}
	if d != nil {
		if st, err := root.Stat(rel); err == nil && st.Mode().IsRegular() {
			if sum, ok := d.known(dir, rel, st); ok {
				return sum, st.Size(), nil
			}
		}
	}
	if cachedOnly {
		return "", 0, errNotCached
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", 0, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	if !st.Mode().IsRegular() {
		return "", 0, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxDigestBytes+1))
	if err != nil {
		return "", 0, err
	}
	fd := fileDigest{rel: rel, size: st.Size(), mtimeNs: st.ModTime().UnixNano(), ino: fileid.Inode(st)}
	h.Sum(fd.sum[:0])
	if d != nil {
		// The identity is the open file's, taken before reading: a file written meanwhile gets a
		// new modification time, so it is hashed again next time.
		d.mu.Lock()
		files := d.files[dir]
		if i, ok := find(files, rel); ok {
			files[i] = fd
		} else {
			d.files[dir] = slices.Insert(files, i, fd)
		}
		d.dirty = true
		d.mu.Unlock()
	}
	return hex.EncodeToString(fd.sum[:]), n, nil
}

// known returns the remembered digest of dir/rel if st is still the file it was taken of.
func (d *digester) known(dir, rel string, st fs.FileInfo) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	files := d.files[dir]
	if i, ok := find(files, rel); ok && files[i].is(st) {
		return hex.EncodeToString(files[i].sum[:]), true
	}
	return "", false
}

// module returns the remembered check of the module key names, or nil.
func (d *digester) module(key moduleKey) *moduleCheck {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.modules[key]
}

// remember keeps the check of the module key names.
func (d *digester) remember(key moduleKey, mc *moduleCheck) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.modules[key] = mc
	d.dirty = true
}

// cachedFlat is walk(dir, true) for a skill directory without subdirectories, from the listing
// its load made: a stat per file and no directory opened again. applicable is false when the
// listing has what only the walk handles (a subdirectory, a symlink, more files than the digest
// allows): the caller walks then.
func (d *digester) cachedFlat(dir string, entries []fs.DirEntry, stats map[string]fs.FileInfo) (t tree, applicable bool, err error) {
	if d == nil || entries == nil || len(entries) > maxDigestFiles {
		return tree{}, false, nil
	}
	top := map[string]string{}
	files := make([]treeFile, 0, len(entries))
	var total int64
	for _, e := range entries {
		name := e.Name()
		switch typ := e.Type(); {
		case strings.HasPrefix(name, "."):
			continue
		case typ.IsDir() && name == "src":
			continue
		case typ.IsDir(), typ&fs.ModeSymlink != 0:
			return tree{}, false, nil
		case !typ.IsRegular():
			continue // a FIFO, a device: not part of the skill (see fileSum)
		}
		st := stats[name] // what the load stat'ed already (its manifest)
		if st == nil {
			if st, err = os.Lstat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
				return tree{}, true, errNotCached // changed since the listing
			}
		}
		sum, ok := d.known(dir, name, st)
		if !ok {
			return tree{}, true, errNotCached
		}
		if total += st.Size(); total > maxDigestBytes {
			return tree{}, false, nil
		}
		top[name] = sum
		files = append(files, treeFile{name, st.Size(), sum})
	}
	// A directory's listing is sorted by name, which for names without "/" is the walk's order.
	return tree{digest: sumTree(files), module: top[spec.ModuleFile], top: top}, true, nil
}
