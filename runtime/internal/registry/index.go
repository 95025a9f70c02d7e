package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// The index keeps what checks learned (the digester's file digests and module checks) for the next
// process over the same skill directories, so that a fresh `skillbox list` of ten thousand skills
// reports their status from a stat of each file instead of reading every module. It is one file per
// set of skill directories, beside the compilation cache and under its rules (runtime's openIndex
// makes its directory with engine.EnsurePrivateDir: the user's own, mode 0700, no symlinks), read
// by a process's first scan and written whole, atomically, by a process that scanned; one that did
// not (skillbox run of one skill) appends what it learned to a journal beside it instead, which the
// next scan folds in.
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
// version's and bounds it again (runtime's Skill.module). An index that does not decode, or whose
// checksum does not match, is ignored whole.

// indexMagic starts the file, followed by one record (see encodeRecord); the version changes
// with the layout.
const indexMagic = "skillbox-index-v2\n"

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
	Limits      policy.ModuleLimits
	MemMiB      int64
	Size        int64
	Info        *wasmcheck.Info
	LinearLimit uint64
	Problem     *spec.ManifestError
	Build       bool
}

var indexMu sync.Mutex // one write at a time, within this process

// JournalSuffix names the journal beside an index: records appended by processes that did not
// read the index, folded into it by the next that does.
const JournalSuffix = ".journal"

// maxJournalBytes bounds a journal; a longer one is dropped (it is a cache).
const maxJournalBytes = 16 << 20

// Load reads the index at path into d.
func (d *Digester) Load(path string) error {
	data, err := readIndexFile(path, maxIndexBytes)
	if err != nil {
		return err
	}
	rest, ok := bytes.CutPrefix(data, []byte(indexMagic))
	if !ok {
		return errors.New("not an index of this version")
	}
	x, _, err := decodeRecord(rest)
	if err != nil {
		return err
	}
	d.merge(x)
	return nil
}

// LoadJournal folds the journal at path into d, up to its first damaged record, and marks d
// dirty so that the next save writes the index whole and removes the journal.
func (d *Digester) LoadJournal(path string) {
	data, err := readIndexFile(path, maxJournalBytes)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(path)
		}
		return
	}
	for len(data) > 0 {
		x, n, err := decodeRecord(data)
		if err != nil {
			break
		}
		d.merge(x)
		data = data[n:]
	}
	d.mu.Lock()
	d.dirty = true
	d.mu.Unlock()
}

func readIndexFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("more than %d bytes", max)
	}
	return data, nil
}

// A record is its payload's length (8 bytes, little-endian), the payload's sha256, and the
// payload: an indexData in gob.
func encodeRecord(x indexData) ([]byte, error) {
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(x); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(payload.Bytes())
	out := binary.LittleEndian.AppendUint64(nil, uint64(payload.Len()))
	out = append(out, sum[:]...)
	return append(out, payload.Bytes()...), nil
}

// decodeRecord decodes the record at the start of data and returns its length.
func decodeRecord(data []byte) (indexData, int, error) {
	var x indexData
	if len(data) < 8+sha256.Size {
		return x, 0, errors.New("truncated")
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8-sha256.Size) {
		return x, 0, errors.New("truncated")
	}
	sum, payload := data[8:8+sha256.Size], data[8+sha256.Size:8+sha256.Size+int(n)]
	if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
		return x, 0, errors.New("its checksum does not match")
	}
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&x); err != nil {
		return x, 0, err
	}
	return x, 8 + sha256.Size + int(n), nil
}

// merge adds what x holds to d, replacing what d had for the same files and modules.
func (d *Digester) merge(x indexData) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dir := range x.Dirs {
		files := make([]fileDigest, len(dir.Files))
		for i, f := range dir.Files {
			files[i] = fileDigest{rel: f.Rel, size: f.Size, mtimeNs: f.MtimeNs, ino: f.Ino, sum: f.Sum}
		}
		slices.SortFunc(files, func(a, b fileDigest) int { return strings.Compare(a.rel, b.rel) })
		d.files[dir.Dir] = files
	}
	for _, m := range x.Modules {
		if (m.Info == nil) == (m.Problem == nil) {
			continue // a check has one or the other
		}
		key := ModuleKey{Hash: hex.EncodeToString(m.Hash[:]), Limits: m.Limits, MemMiB: m.MemMiB}
		d.modules[key] = &ModuleCheck{Size: m.Size, Info: m.Info, LinearLimit: m.LinearLimit, Problem: m.Problem, Build: m.Build}
	}
}

// Save writes what d learned, if anything, to the index at path: the whole of it, when whole is
// set (to a temporary file in the same directory, renamed over the old one, so that a reader
// never sees half of it; the journal is then folded in, and removed), else as a record appended
// to the journal (one write, which the OS appends whole). It also removes the indexes of other
// skill directories that no process wrote for indexMaxAge.
func (d *Digester) Save(path string, whole bool) error {
	indexMu.Lock()
	defer indexMu.Unlock()
	x, changed := d.snapshot()
	if !changed {
		return nil
	}
	rec, err := encodeRecord(x)
	if err == nil && whole {
		err = safefile.WriteAtomic(path, append([]byte(indexMagic), rec...), 0o600)
		if err == nil {
			_ = os.Remove(path + JournalSuffix)
		}
	} else if err == nil {
		err = appendJournal(path+JournalSuffix, rec)
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

func appendJournal(path string, rec []byte) error {
	if st, err := os.Lstat(path); err == nil && (!st.Mode().IsRegular() || st.Size()+int64(len(rec)) > maxJournalBytes) {
		return fmt.Errorf("journal %s is not a regular file or is full; the next scan folds it in", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(rec)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// snapshot copies d for saving and marks it clean; changed is false when it was clean.
func (d *Digester) snapshot() (x indexData, changed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dirty {
		return x, false
	}
	d.dirty = false
	for dir, files := range d.files {
		e := indexDir{Dir: dir, Files: make([]indexFile, 0, len(files))}
		for _, f := range files {
			e.Files = append(e.Files, indexFile{Rel: f.rel, Size: f.size, MtimeNs: f.mtimeNs, Ino: f.ino, Sum: f.sum})
		}
		x.Dirs = append(x.Dirs, e)
	}
	for k, m := range d.modules {
		hash, err := hex.DecodeString(k.Hash)
		if err != nil || len(hash) != sha256.Size {
			continue
		}
		im := indexModule{Hash: [sha256.Size]byte(hash), Limits: k.Limits, MemMiB: k.MemMiB, Size: m.Size, LinearLimit: m.LinearLimit, Problem: m.Problem, Build: m.Build}
		if m.Info != nil {
			info := *m.Info
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
