//go:build !unix

package wasifs

import (
	"os"
	"time"

	"github.com/tetratelabs/wazero/experimental/sys"
)

// Elsewhere than Unix, the flags have no equivalent (os.Root and the type check after open
// still hold), and setting the times of an open file is not supported.
const (
	oDirectory = 0
	oNoctty    = 0
)

func setBlocking(*os.File, int) sys.Errno { return 0 }

func futimes(*os.File, time.Time, time.Time) sys.Errno { return sys.ENOSYS }
