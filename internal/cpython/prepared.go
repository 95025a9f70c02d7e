package cpython

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/memimage"
	"github.com/skillbox-dev/skillbox/internal/safefile"
)

// Preparing the interpreter for wazero — instrumenting its 8,000 functions (interrupt) and taking
// its memory out as an image (memimage) — costs a process 100-250 ms, a third of a one-shot
// `skillbox run` of a Python skill. What it makes depends on the embedded interpreter and on
// the code of this executable alone, so a process keeps it in the compilation cache's directory
// and the next process of the same executable reads it back.
//
// The files are named by the executable's identity (its path, device, inode, size and
// modification time: a rebuilt binary is another file, and the interpreter is embedded in it),
// and hold a checksum of their contents, checked on every read: a file cut short or damaged is
// made again.
// They are written to a temporary file and renamed, so a reader never sees one half written;
// the files of other keys (and temporary files an hour old) are removed when new ones are
// written, so the directory holds one interpreter per executable in use at that moment, about
// 11 MB.

// preparedDir is the subdirectory of the compilation cache's directory the files are kept in.
const preparedDir = "skillbox-prepared"

// prepare returns the interpreter instrumented and split, and its image: read from cacheDir when
// a process of this executable made them, else made (and written there, when cacheDir is set).
func prepare(cacheDir string) ([]byte, *memimage.Image, error) {
	key, ok := preparedKey()
	dir := filepath.Join(cacheDir, preparedDir)
	if cacheDir != "" && ok {
		if code, img, err := readPrepared(dir, key); err == nil {
			return code, img, nil
		}
	}
	code, img, err := prepareNow()
	if err != nil {
		return nil, nil, err
	}
	if cacheDir != "" && ok {
		_ = writePrepared(dir, key, code, img.Bytes()) // best effort: the next process prepares again
	}
	return code, img, nil
}

// prepareNow instruments the interpreter and takes its memory out as an image.
func prepareNow() ([]byte, *memimage.Image, error) {
	// Instrumented for its call stack's bound (interrupt.StackBytes), which the run's memory
	// charge counts on, and for interrupt.Stop, which ends a run at its deadline.
	inst, err := interrupt.InstrumentWithTable(pythonWASM, pythonFrames)
	if err != nil {
		return nil, nil, fmt.Errorf("cpython: instrument the interpreter with python.frames: %w", err)
	}
	// The snapshot's memory, ten thousand data segments, is an image every run starts from
	// rather than copies in (package memimage).
	inst, img, err := memimage.Split(inst)
	if err == nil && img == nil {
		err = errors.New("it has no data segments to take")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cpython: take the snapshot's memory out of the interpreter: %w", err)
	}
	return inst, img, nil
}

// preparedKey names what this executable prepares from the embedded interpreter; false when the
// executable cannot be identified (nothing is then kept).
func preparedKey() (string, bool) {
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	// The executable embeds the interpreter and its frame table: its identity names them too
	// (hashing them would cost every process ~7 ms).
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d\x00%d", exe, st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano()))
	return hex.EncodeToString(h[:16]), true
}

// The files of key: the module, the image, and the checksum of the two together.
func preparedFiles(dir, key string) (code, image, sum string) {
	base := filepath.Join(dir, "cpython-"+key)
	return base + ".wasm", base + ".img", base + ".sum"
}

// readPrepared reads the files of key and checks them against their sum.
func readPrepared(dir, key string) ([]byte, *memimage.Image, error) {
	codePath, imagePath, sumPath := preparedFiles(dir, key)
	code, err := os.ReadFile(codePath)
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(imagePath)
	if err != nil {
		return nil, nil, err
	}
	want, err := os.ReadFile(sumPath)
	if err != nil {
		return nil, nil, err
	}
	if got := preparedSum(code, data); !bytes.Equal(want, got) {
		return nil, nil, errors.New("cpython: the prepared interpreter does not match its sum")
	}
	img, err := memimage.FromBytes(data)
	return code, img, err
}

// preparedSum is the CRC-32C of code and data with their lengths: it finds a file cut short or
// damaged (the directory is the user's own, as the native code beside it is), at a tenth of the
// cost of a sha256 of 11 MB.
func preparedSum(code, data []byte) []byte {
	c := crc32.Update(0, castagnoli, code)
	c = crc32.Update(c, castagnoli, data)
	return fmt.Appendf(nil, "crc32c %08x %d %d", c, len(code), len(data))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writePrepared writes the files of key (each renamed into place, the sum last, so a reader that
// finds the sum finds the two it sums), then removes the files of other keys.
func writePrepared(dir, key string, code, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	codePath, imagePath, sumPath := preparedFiles(dir, key)
	for _, f := range []struct {
		path string
		data []byte
	}{{codePath, code}, {imagePath, data}, {sumPath, preparedSum(code, data)}} {
		if err := safefile.WriteAtomic(f.path, f.data, 0o600); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "cpython-") && !strings.HasPrefix(name, "cpython-"+key+"."):
			_ = os.Remove(filepath.Join(dir, name))
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-"): // left by a process that died writing, not one writing now
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
				_ = os.Remove(filepath.Join(dir, name))
			}
		}
	}
	return nil
}
