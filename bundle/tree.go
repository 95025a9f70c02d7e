package bundle

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
	"syscall"

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
const DigestPrefix = "sha256:"

// Bounds on what a digest reads: a skill directory is untrusted input, and a scan hashes it.
const (
	MaxTreeFiles = 4096
	MaxTreeBytes = 512 << 20
)

// errTreeTooLarge is a skill tree over the digest's bounds.
var ErrTreeTooLarge = errors.New("the skill's directory is too large")

// errNotCached is a digest that would have to read a file: what a scan, which reads no module,
// gets for a skill that changed since it was last checked.
var ErrNotCached = errors.New("a file changed since it was last hashed")

// tree is what a digest walk of a skill's directory found.
type Tree struct {
	Digest string
	// module is the sha256 of execute.wasm as the walk found it ("" when it is not a regular file
	// of the tree): the module's hash, unless the file changes before it is read.
	Module string
	// top holds the sha256 of each file directly in the skill's directory, by name.
	Top map[string]string
	// files are the files the digest covers, sorted by path (only from walk).
	Files []TreeFile
}

// treeFile is one file a tree digest covers: its slash path in the skill, size and sha256 (hex).
type TreeFile struct {
	Rel  string
	Size int64
	Sum  string
}

// SumTree is the tree digest of files (sorted by rel): the one place its formula is written.
func SumTree(files []TreeFile) string {
	h := sha256.New()
	for _, f := range files {
		h.Write([]byte(f.Sum + "  " + f.Rel + "\n"))
	}
	return DigestPrefix + hex.EncodeToString(h.Sum(nil))
}

// FileMemory remembers the digests of files by their identity on disk (path, size,
// modification time, inode), so that a walk of an unchanged tree hashes nothing.
type FileMemory interface {
	// Known returns the remembered hex sha256 of dir/rel, if st is still the file it was taken
	// of.
	Known(dir, rel string, st fs.FileInfo) (sum string, ok bool)
	// Remember keeps the sha256 of dir/rel, read from the file st describes.
	Remember(dir, rel string, st fs.FileInfo, sum [sha256.Size]byte)
}

// Walk digests the skill tree at dir, remembering file digests in mem (nil: no memory).
// cachedOnly reads no file: a file whose identity mem does not know ends the walk with
// ErrNotCached.
func Walk(dir string, mem FileMemory, cachedOnly bool) (Tree, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Tree{}, err
	}
	defer root.Close()
	var entries []TreeFile
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
		if len(entries) >= MaxTreeFiles {
			return fmt.Errorf("%w: more than %d files outside src/ (keep build outputs under src/ or in hidden directories)", ErrTreeTooLarge, MaxTreeFiles)
		}
		sum, size, err := fileSum(mem, root, dir, rel, e, cachedOnly)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if sum == "" {
			return nil // not a regular file, nor a symlink to one
		}
		if total += size; total > MaxTreeBytes {
			return fmt.Errorf("%w: more than %d bytes outside src/", ErrTreeTooLarge, MaxTreeBytes)
		}
		rel = path.Clean(rel)
		if !strings.Contains(rel, "/") {
			top[rel] = sum
		}
		entries = append(entries, TreeFile{Rel: rel, Size: size, Sum: sum})
		return nil
	})
	if err != nil {
		return Tree{}, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Rel < entries[j].Rel })
	return Tree{Digest: SumTree(entries), Module: top[spec.ModuleFile], Top: top, Files: entries}, nil
}

// fileSum hashes one file of the tree, through root so that no symlink leads out of it, without
// blocking on a FIFO. It returns "" for what is not part of the skill: not a regular file, a
// symlink that leads out of the directory or nowhere, a file the host may not read — none of
// which a run or a client can read either. A file whose identity is remembered is not opened:
// a stat tells, so checking an unchanged tree costs a stat per file.
func fileSum(mem FileMemory, root *os.Root, dir, rel string, e fs.DirEntry, cachedOnly bool) (string, int64, error) {
	if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
		return "", 0, nil
	}
	if mem != nil {
		if st, err := root.Stat(rel); err == nil && st.Mode().IsRegular() {
			if sum, ok := mem.Known(dir, rel, st); ok {
				return sum, st.Size(), nil
			}
		}
	}
	if cachedOnly {
		return "", 0, ErrNotCached
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
	n, err := io.Copy(h, io.LimitReader(f, MaxTreeBytes+1))
	if err != nil {
		return "", 0, err
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	if mem != nil {
		// The identity is the open file's, taken before reading: a file written meanwhile gets a
		// new modification time, so it is hashed again next time.
		mem.Remember(dir, rel, st, sum)
	}
	return hex.EncodeToString(sum[:]), n, nil
}
