package main

import (
	"strings"
)

// shortDigest is a digest's first 12 hex digits: what a person reads and types (the commands
// take any prefix of at least 8 that names one version).
func shortDigest(d string) string {
	h := strings.TrimPrefix(d, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}
