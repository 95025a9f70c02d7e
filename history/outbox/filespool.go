package outbox

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The spool on disk is a directory of segments, NNNNNNNNNNNNNNNN.spool, written in order and
// removed once every entry they hold was written. An entry is a frame: its length and the
// CRC-32C of its bytes (4 bytes each, little endian), then the bytes. A frame cut short or
// whose checksum fails (a write the process died in) ends its segment: opening the spool
// truncates it there.
const (
	segSuffix   = ".spool"
	frameHeader = 8
	// maxSegment is the size past which appends start a new segment, so a drained one can go.
	maxSegment = 16 << 20
	// maxEntry bounds one entry read back: a length past it is damage, not an entry.
	maxEntry = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileSpool is a spool in a directory: it outlives the process.
type fileSpool struct {
	dir  string // this process's own, under root
	root string
	lock *os.File // held while the process lives: see lockDir
	max  int64
	log  *slog.Logger
	segs []*segment // oldest first; appends go to the last
	tail *os.File   // the last segment, open for appending (nil until the first append)
	head *os.File   // the first segment, open for reading (nil until the first peek)
	// off and n are how far into segs[0] entries were written out.
	off       int64
	peekN     int
	peekBytes int64
	total     int
	bytes     int64
	nextSeg   uint64
}

type segment struct {
	path string
	n    int
	size int64
	at   time.Time // when its first entry was appended (its file's time, for an old one)
}

// openFileSpool opens this process's spool under root: a directory of its own, locked while
// the process lives, so that processes sharing root (two commands of one project, replicas on
// one disk) never write or replay each other's segments. The segments of a directory whose
// process is gone (its lock is free) are adopted first, in their order: they are replayed
// before anything this process spools.
func openFileSpool(root string, maxBytes int64, log *slog.Logger) (*fileSpool, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(root, hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	lock, err := lockDir(dir, true)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s := &fileSpool{dir: dir, root: root, lock: lock, max: maxBytes, log: log}
	if err := s.adoptOrphans(); err != nil {
		s.close()
		return nil, err
	}
	names, err := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
	if err != nil {
		s.close()
		return nil, err
	}
	slices.Sort(names)
	for _, name := range names {
		num, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(name), segSuffix), 10, 64)
		if err != nil {
			continue // not ours
		}
		s.nextSeg = max(s.nextSeg, num+1)
		seg, err := scanSegment(name, log)
		if err != nil {
			s.close()
			return nil, err
		}
		if seg.n == 0 {
			_ = os.Remove(name)
			continue
		}
		s.segs = append(s.segs, seg)
		s.total += seg.n
		s.bytes += seg.size
	}
	return s, nil
}

// adoptOrphans moves into s's directory the segments of every other directory under root whose
// lock is free (its process is gone), each directory's in their order, and removes it.
func (s *fileSpool) adoptOrphans() error {
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return err
	}
	var next uint64
	for _, e := range entries {
		other := filepath.Join(s.root, e.Name())
		if !e.IsDir() || other == s.dir {
			continue
		}
		lock, err := lockDir(other, false)
		if err != nil {
			continue // its process lives (or it is not a spool): not ours to touch
		}
		names, _ := filepath.Glob(filepath.Join(other, "*"+segSuffix))
		slices.Sort(names)
		for _, name := range names {
			to := filepath.Join(s.dir, fmt.Sprintf("%016d%s", next, segSuffix))
			if err := os.Rename(name, to); err != nil {
				unlockDir(lock)
				return fmt.Errorf("adopt the spool %s: %w", other, err)
			}
			next++
		}
		if len(names) > 0 {
			s.log.Warn("outbox: adopting the records a stopped process spooled", "segments", len(names), "from", other)
		}
		_ = os.RemoveAll(other)
		unlockDir(lock)
	}
	return nil
}

// scanSegment counts a segment's whole frames and truncates a torn one at its end.
func scanSegment(path string, log *slog.Logger) (*segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	seg := &segment{path: path, at: fi.ModTime()}
	var hdr [frameHeader]byte
	buf := []byte(nil)
	for {
		if _, err := f.ReadAt(hdr[:], seg.size); err != nil {
			break
		}
		n := int64(binary.LittleEndian.Uint32(hdr[:4]))
		if n > maxEntry || seg.size+frameHeader+n > fi.Size() {
			break
		}
		buf = slices.Grow(buf[:0], int(n))[:n]
		if _, err := f.ReadAt(buf, seg.size+frameHeader); err != nil {
			break
		}
		if crc32.Checksum(buf, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			break
		}
		seg.size += frameHeader + n
		seg.n++
	}
	if seg.size < fi.Size() {
		log.Warn("outbox: the spool ends in a torn write (the process stopped in it): dropped", "segment", path, "bytes", fi.Size()-seg.size)
		if err := f.Truncate(seg.size); err != nil {
			return nil, err
		}
	}
	return seg, nil
}

func (s *fileSpool) append(entries [][]byte) error {
	var need int64
	for _, e := range entries {
		need += frameHeader + int64(len(e))
	}
	if s.bytes+need > s.max {
		return ErrSpoolFull
	}
	if s.tail == nil || s.segs[len(s.segs)-1].size >= maxSegment {
		if err := s.newSegment(); err != nil {
			return err
		}
	}
	seg := s.segs[len(s.segs)-1]
	buf := make([]byte, 0, need)
	for _, e := range entries {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(e)))
		buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(e, castagnoli))
		buf = append(buf, e...)
	}
	_, err := s.tail.Write(buf)
	if err == nil {
		err = s.tail.Sync()
	}
	if err != nil {
		// No half batch: what was written of it goes, so the segment ends on a whole frame.
		if terr := s.tail.Truncate(seg.size); terr != nil {
			s.log.Error("outbox: cannot cut a failed append from the spool", "segment", seg.path, "err", terr)
		}
		_, _ = s.tail.Seek(seg.size, io.SeekStart)
		return fmt.Errorf("spool %s: %w", seg.path, err)
	}
	if seg.n == 0 {
		seg.at = time.Now()
	}
	seg.n += len(entries)
	seg.size += need
	s.total += len(entries)
	s.bytes += need
	return nil
}

// newSegment starts a segment after the last, for appends.
func (s *fileSpool) newSegment() error {
	if s.tail != nil {
		_ = s.tail.Close()
		s.tail = nil
	}
	path := filepath.Join(s.dir, fmt.Sprintf("%016d%s", s.nextSeg, segSuffix))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if d, err := os.Open(s.dir); err == nil { // the new name survives a crash
		_ = d.Sync()
		d.Close()
	}
	s.nextSeg++
	s.tail = f
	s.segs = append(s.segs, &segment{path: path, at: time.Now()})
	return nil
}

func (s *fileSpool) peek(n int) ([][]byte, error) {
	s.peekN, s.peekBytes = 0, 0
	if len(s.segs) == 0 {
		return nil, nil
	}
	seg := s.segs[0]
	if s.head == nil {
		f, err := os.Open(seg.path)
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		s.head = f
	}
	var out [][]byte
	var hdr [frameHeader]byte
	off := s.off
	for len(out) < n && off < seg.size {
		if _, err := s.head.ReadAt(hdr[:], off); err != nil {
			return nil, fmt.Errorf("spool %s: %w", seg.path, err)
		}
		size := int64(binary.LittleEndian.Uint32(hdr[:4]))
		if size > maxEntry || off+frameHeader+size > seg.size {
			return nil, fmt.Errorf("spool %s: a damaged frame at %d", seg.path, off)
		}
		e := make([]byte, size)
		if _, err := s.head.ReadAt(e, off+frameHeader); err != nil {
			return nil, fmt.Errorf("spool %s: %w", seg.path, err)
		}
		if crc32.Checksum(e, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			return nil, fmt.Errorf("spool %s: a damaged frame at %d", seg.path, off)
		}
		out = append(out, e)
		off += frameHeader + size
	}
	s.peekN, s.peekBytes = len(out), off-s.off
	return out, nil
}

func (s *fileSpool) advance(n int) error {
	if n != s.peekN {
		return errors.New("spool: advance past what was peeked")
	}
	s.off += s.peekBytes
	s.total -= n
	s.bytes -= s.peekBytes
	s.peekN, s.peekBytes = 0, 0
	seg := s.segs[0]
	if s.off < seg.size {
		return nil
	}
	// Every entry of the oldest segment is written: it goes.
	if s.head != nil {
		_ = s.head.Close()
		s.head = nil
	}
	if len(s.segs) == 1 && s.tail != nil {
		_ = s.tail.Close()
		s.tail = nil
	}
	s.segs = s.segs[1:]
	s.off = 0
	if err := os.Remove(seg.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

func (s *fileSpool) size() (int, int64, time.Time) {
	if s.total == 0 {
		return 0, 0, time.Time{}
	}
	return s.total, s.bytes, s.segs[0].at
}

func (s *fileSpool) close() error {
	for _, f := range []*os.File{s.head, s.tail} {
		if f != nil {
			_ = f.Close()
		}
	}
	s.head, s.tail = nil, nil
	if s.lock != nil {
		if s.total == 0 {
			_ = os.RemoveAll(s.dir) // nothing left to replay: no directory left behind
		}
		unlockDir(s.lock)
		s.lock = nil
	}
	return nil
}
