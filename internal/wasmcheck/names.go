package wasmcheck

import "github.com/skillbox-dev/skillbox/internal/wasmbin"

// names walks the contents of a "name" custom section after its name, with the rule the rest of
// the module gets: every count fits the bytes that follow and its limit, since wazero decodes the
// section (decodeNameSection) and allocates by its counts. Subsections must come in increasing
// order of id, each once, as the spec's appendix says, and each must end where its size says:
// wazero moves on by the declared size, not by what it read, so a section where the two differ
// would be read differently by wazero than here. Unknown subsections are skipped, as wazero does.
// Any problem is returned; the caller drops the section.
func (w *walker) names() error {
	r := &w.r
	last := -1
	var localNames uint64
	for r.Pos < r.End {
		start := r.Pos
		id, _ := r.Byte("name subsection id")
		if int(id) <= last {
			return malformed(start, "name subsection %d after subsection %d", id, last)
		}
		last = int(id)
		size, err := r.U32("name subsection size")
		if err != nil {
			return err
		}
		if uint64(size) > uint64(r.Left()) {
			return malformed(start, "name subsection %d of %d bytes overruns the section (%d bytes left)", id, size, r.Left())
		}
		secEnd := r.End
		r.End = r.Pos + int(size)
		switch id {
		case 0:
			_, err = r.Name("module name")
		case 1:
			err = w.nameMap()
		case 2:
			err = w.localNames(&localNames)
		default:
			r.Pos = r.End
		}
		if err != nil {
			return wasmbin.Within(err, "name subsection %d", id)
		}
		if r.Pos != r.End {
			return malformed(r.Pos, "name subsection %d ends %d bytes before its declared size", id, r.End-r.Pos)
		}
		r.End = secEnd
	}
	return nil
}

// nameMap walks the function names: a vector of (index, name).
func (w *walker) nameMap() error {
	r := &w.r
	n, err := count(r, "the number of function names", 0, 2, uint64(w.l.MaxFunctions), "maxFunctions")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if _, err := r.U32("function index"); err != nil {
			return err
		}
		if _, err := r.Name("function name"); err != nil {
			return err
		}
	}
	return nil
}

// localNames walks the local names: a vector of (function index, vector of (index, name)). The
// locals named in one function are bounded like its locals, and all of them like all locals.
func (w *walker) localNames(total *uint64) error {
	r := &w.r
	n, err := count(r, "the number of functions with local names", 0, 2, uint64(w.l.MaxFunctions), "maxFunctions")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		fn, err := r.U32("function index")
		if err != nil {
			return err
		}
		m, err := count(r, "the number of local names", *total, 2, w.l.MaxTotalLocals, "maxTotalLocals")
		if err != nil {
			return err
		}
		if m > w.l.MaxLocals {
			return limitErr("the number of function "+itoa(int(fn))+"'s local names", uint64(m), uint64(w.l.MaxLocals), "", "maxLocals")
		}
		*total += uint64(m)
		for j := uint32(0); j < m; j++ {
			if _, err := r.U32("local index"); err != nil {
				return err
			}
			if _, err := r.Name("local name"); err != nil {
				return err
			}
		}
	}
	return nil
}
