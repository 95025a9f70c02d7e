package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

func TestMain(m *testing.M) {
	storetest.ChildMain(sqlite.Open)
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New:  func(t *testing.T) string { return filepath.Join(t.TempDir(), "data", sqlite.FileName) },
		Open: sqlite.Open,
	})
}
