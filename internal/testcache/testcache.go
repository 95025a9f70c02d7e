// Package testcache names the compilation cache that the tests of every package share.
package testcache

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir is the shared cache: os.TempDir()/skillbox-test-cache-<uid>. Shared between packages and
// kept between runs because a Go-built module takes seconds to compile under -race (wazero's cache
// is safe to share between processes). Per user because runtime.New uses only a directory of the
// current user's with mode 0700 (and creates it so): the directory of another user, or the
// unsuffixed one older runs left with other modes, would be refused.
func Dir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("skillbox-test-cache-%d", os.Getuid()))
}
