package cpython

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A process keeps the interpreter it prepared, and the next reads it back instead of preparing
// it again; a kept file that does not match its sum is made again; the files of other keys go.
func TestThePreparedInterpreterIsKept(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, preparedDir)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(dir, 0o700))
	must(os.WriteFile(filepath.Join(dir, "cpython-0123.wasm"), []byte("another executable's"), 0o600))
	stale, fresh := filepath.Join(dir, ".tmp-1"), filepath.Join(dir, ".tmp-2") // a dead writer's, and one writing now
	must(os.WriteFile(stale, []byte("x"), 0o600))
	must(os.WriteFile(fresh, []byte("x"), 0o600))
	must(os.Chtimes(stale, time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour)))
	now, nowImg, err := prepareNow()
	must(err)

	code, img, err := prepare(cache)
	must(err)
	if !bytes.Equal(code, now) || !bytes.Equal(img.Bytes(), nowImg.Bytes()) {
		t.Fatal("the first process's interpreter differs from one prepared now")
	}
	key, ok := preparedKey()
	if !ok {
		t.Fatal("this test's executable has no key")
	}
	codePath, imagePath, sumPath := preparedFiles(dir, key)
	if _, err := os.Stat(filepath.Join(dir, "cpython-0123.wasm")); !os.IsNotExist(err) {
		t.Errorf("another key's file is still there: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a dead writer's temporary file is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a temporary file being written was removed: %v", err)
	}

	// What is read back is what the files hold: a module written with its sum is used as it is.
	marked := append(bytes.Clone(now), 0, 4, 'm', 'a', 'r', 'k') // a custom section at the end
	must(writePrepared(dir, key, marked, nowImg.Bytes()))
	code, _, err = prepare(cache)
	must(err)
	if !bytes.Equal(code, marked) {
		t.Fatal("the next process prepared the interpreter again instead of reading it")
	}

	// A file that does not match its sum is not used, and is made again.
	data, err := os.ReadFile(imagePath)
	must(err)
	data[len(data)/2] ^= 0xff
	must(os.WriteFile(imagePath, data, 0o600))
	code, img, err = prepare(cache)
	must(err)
	if !bytes.Equal(code, now) || !bytes.Equal(img.Bytes(), nowImg.Bytes()) {
		t.Fatal("a changed image was used")
	}
	if _, _, err := readPrepared(dir, key); err != nil {
		t.Errorf("the files were not made again: %v", err)
	}
	for _, p := range []string{codePath, imagePath, sumPath} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
}
