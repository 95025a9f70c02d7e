//go:build !unix

package diskfull

const edquot = 0 // no such error number: errors.Is never matches it

// Full cannot tell on this system: false.
func Full(string) bool { return false }
