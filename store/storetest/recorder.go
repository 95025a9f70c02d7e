package storetest

import (
	"testing"

	"github.com/skillbox-dev/skillbox/store"
)

// NewRecorder starts a store.Recorder over s for a test, closed when it ends.
func NewRecorder(tb testing.TB, s store.Store, opts store.RecorderOptions) *store.Recorder {
	tb.Helper()
	rec, err := store.NewRecorder(s, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rec.Close)
	return rec
}
