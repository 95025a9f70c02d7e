package cpython

import "github.com/skillbox-dev/skillbox/internal/scripterr"

// Kind is what ended a run that failed; the kinds are scripterr's, shared with the other
// script runner.
type Kind = scripterr.Kind

// The kinds of an *Error (see scripterr).
const (
	KindSkillError       = scripterr.SkillError
	KindTimeout          = scripterr.Timeout
	KindMemoryLimit      = scripterr.MemoryLimit
	KindPermissionDenied = scripterr.PermissionDenied
	KindOutputLimit      = scripterr.OutputLimit
)

// Error is a run that failed for a reason of the skill's making; Run returns any other error as
// another type (see scripterr.Error).
type Error = scripterr.Error
