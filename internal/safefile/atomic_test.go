package safefile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomic: the file is replaced whole, with the mode asked for, and no temporary file
// is left beside it.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	for _, c := range []struct {
		data string
		perm os.FileMode
	}{{"first", 0o600}, {"second, longer", 0o644}} {
		if err := WriteAtomic(path, []byte(c.data), c.perm); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		st, _ := os.Stat(path)
		if err != nil || string(got) != c.data || st.Mode().Perm() != c.perm {
			t.Errorf("after writing %q: %q, mode %v, %v", c.data, got, st.Mode().Perm(), err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left beside it: %v", entries)
	}
	if err := WriteAtomic(filepath.Join(dir, "missing", "out"), []byte("x"), 0o644); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}
