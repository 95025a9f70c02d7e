package runtime

import (
	"testing"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// The leaf packages repeat a few bounds of the host functions rather than link them: these hold
// each copy equal to its source.
func TestLeafBoundsMatchTheHost(t *testing.T) {
	if artifact.MaxNameBytes != hostfuncs.MaxPathBytes {
		t.Errorf("artifact.MaxNameBytes = %d, hostfuncs.MaxPathBytes = %d: an artifact name must fit a guest path", artifact.MaxNameBytes, hostfuncs.MaxPathBytes)
	}
}
