package interop

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the run history and versions the skillbox processes of these tests record
// (every command that runs skills keeps them by default, in the project's .skillbox/) in a
// directory of this test binary's, never the repository's or the user's own: the processes,
// and the clients that start them, inherit SKILLBOX_DATA_DIR (and XDG_DATA_HOME).
func TestMain(m *testing.M) {
	data, err := os.MkdirTemp("", "skillbox-interop-data-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_DATA_HOME", data)
	os.Setenv("SKILLBOX_DATA_DIR", data)
	code := m.Run()
	os.RemoveAll(data)
	os.Exit(code)
}
