package access

import (
	"crypto/sha256"
	"encoding/hex"
)

// UserScope is the name of a user's own place, on disk and in the version store: the first 16
// hex digits of the sha256 of the user's name. A user's name is whatever a key says (an email,
// a name with spaces), never a path; the scope is always safe to join to one.
func UserScope(user string) string {
	sum := sha256.Sum256([]byte(user))
	return hex.EncodeToString(sum[:8])
}
