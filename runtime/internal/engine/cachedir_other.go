//go:build !unix

package engine

import "io/fs"

// checkModes is false off Unix: on Windows access is governed by ACLs that fs.FileInfo does not
// show, and the permission bits Go reports are made up (every directory would look 0777), so the
// owner and mode checks of the cache directory are skipped there. The no-shared-fallback rule and
// the symbolic link check still apply.
const checkModes = false

// fileOwner reports no owner: there is no uid to compare with off Unix.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
