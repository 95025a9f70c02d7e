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
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
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

// digester hashes skill trees, remembering each file's digest by its identity on disk (path,
// size, modification time, inode), so a rescan hashes only what changed.
type digester struct {
	mu    sync.Mutex
	files map[string]fileDigest
	seen  map[string]bool // keys used by the scan in progress; the rest are dropped after it
}

type fileDigest struct {
	size  int64
	mtime time.Time
	ino   uint64
	sum   string
}

func newDigester() *digester {
	return &digester{files: map[string]fileDigest{}, seen: map[string]bool{}}
}

// prune forgets the files no digest since the last prune has used.
func (d *digester) prune() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range d.files {
		if !d.seen[k] {
			delete(d.files, k)
		}
	}
	d.seen = map[string]bool{}
}

// treeDigest returns the digest of the skill tree at dir (see above). d may be nil (no memory).
func (d *digester) treeDigest(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	type entry struct{ rel, sum string }
	var entries []entry
	var total int64
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
		sum, size, err := d.fileSum(root, dir, rel, e)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if sum == "" {
			return nil // not a regular file, nor a symlink to one
		}
		if total += size; total > maxDigestBytes {
			return fmt.Errorf("%w: more than %d bytes outside src/", errTreeTooLarge, maxDigestBytes)
		}
		entries = append(entries, entry{path.Clean(rel), sum})
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%s  %s\n", e.sum, e.rel)
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// fileSum hashes one file of the tree, through root so that no symlink leads out of it, without
// blocking on a FIFO. It returns "" for what is not part of the skill: not a regular file, a
// symlink that leads out of the directory or nowhere, a file the host may not read — none of
// which a run or a client can read either.
func (d *digester) fileSum(root *os.Root, dir, rel string, e fs.DirEntry) (string, int64, error) {
	if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
		return "", 0, nil
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
	key := dir + "\x00" + rel
	ino := inode(st)
	if d != nil {
		d.mu.Lock()
		d.seen[key] = true
		fd, ok := d.files[key]
		d.mu.Unlock()
		if ok && fd.size == st.Size() && fd.mtime.Equal(st.ModTime()) && fd.ino == ino {
			return fd.sum, st.Size(), nil
		}
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxDigestBytes+1))
	if err != nil {
		return "", 0, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if d != nil {
		d.mu.Lock()
		d.files[key] = fileDigest{size: st.Size(), mtime: st.ModTime(), ino: ino, sum: sum}
		d.mu.Unlock()
	}
	return sum, n, nil
}
