package catalog

// Status is whether a skill loaded.
type Status string

const (
	StatusActive Status = "active"
	StatusError  Status = "error"
	// StatusUnchecked is an executable skill whose manifest is sound but whose module has not
	// been read yet: a scan reads manifests only, so that listing ten thousand skills does not
	// read ten thousand modules. Its first run (or a background check soon after the scan)
	// reads, hashes and bounds-checks the module, and the skill is then active or broken.
	StatusUnchecked Status = "unchecked"
)

// Usable reports whether a skill of this status may be offered (as a tool, in a listing for a
// model) and run: an active one, and an unchecked one, whose run checks it first. A broken one
// may not.
func (st Status) Usable() bool { return st == StatusActive || st == StatusUnchecked }
