package engine

import (
	"os"
	"testing"
)

// TestMain lets BenchmarkCompile compile in a child process: this test binary, run again (see
// runtime.MaybeCompileChild).
func TestMain(m *testing.M) {
	MaybeCompileChild()
	os.Exit(m.Run())
}
