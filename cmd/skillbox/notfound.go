package main

import (
	"errors"

	"github.com/skillbox-dev/skillbox/runtime"
)

// lookupFailure is how the CLI words a skill that cannot be looked up or run, for the operator
// at the terminal: the runtime's [runtime.NotFoundError] in full (the skills directories
// searched, the nearest ids, a broken package's files by their paths), which remote faces never
// show. ok is false for any other error.
func lookupFailure(err error) (msg string, ok bool) {
	var nf *runtime.NotFoundError
	if !errors.As(err, &nf) {
		return "", false
	}
	if nf.Absent == runtime.Missing && len(nf.Nearest) == 0 {
		return nf.Error() + "; skillbox list shows the skills there are", true
	}
	return nf.Error(), true
}
