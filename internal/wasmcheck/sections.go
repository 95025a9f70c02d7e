package wasmcheck

import "github.com/skillbox-dev/skillbox/internal/wasmbin"

// The walkers of the non-custom sections, in section order. Each mirrors the matching decoder of
// wazero v1.12 (internal/wasm/binary) with the default features (CoreFeaturesV2): it accepts what
// that decoder accepts, so that no module wazero takes is refused, and it reads the same bytes the
// same way, so that the counts checked here are the counts wazero will allocate by.

// types walks the type section: function types (0x60 params results), and rec groups (0x4e n
// types) since wazero's decoder reads those whatever the features.
func (w *walker) types() error {
	r := &w.r
	n, err := count(r, "the number of types", 0, 2, uint64(w.l.MaxTypes), "maxTypes")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if r.Pos < r.End && r.B[r.Pos] == 0x4e {
			r.Pos++
			m, err := count(r, "the number of types in a rec group", uint64(len(w.typeParams)), 3, uint64(w.l.MaxTypes), "maxTypes")
			if err != nil {
				return err
			}
			for j := uint32(0); j < m; j++ {
				if err := w.funcType(); err != nil {
					return err
				}
			}
			continue
		}
		if err := w.funcType(); err != nil {
			return err
		}
	}
	w.info.Types = len(w.typeParams)
	return nil
}

func (w *walker) funcType() error {
	r := &w.r
	idx := len(w.typeParams)
	if uint64(idx) >= uint64(w.l.MaxTypes) {
		return limitErr("the number of types", uint64(idx)+1, uint64(w.l.MaxTypes), "", "maxTypes")
	}
	start := r.Pos
	form, err := r.Byte("type form")
	if err != nil {
		return wasmbin.Within(err, "type %d", idx)
	}
	if form != 0x60 {
		return malformed(start, "type %d: form 0x%02x is not a function type (0x60)", idx, form)
	}
	var params uint32
	for k, what := range [2]string{"parameters", "results"} {
		n, err := count(r, what, 0, 1, uint64(w.l.MaxParams), "maxParams")
		if err != nil {
			if le, ok := err.(*LimitError); ok {
				le.What = typeWhat(idx, what)
			}
			return wasmbin.Within(err, "type %d", idx)
		}
		for j := uint32(0); j < n; j++ {
			if err := r.ValType("value type"); err != nil {
				return wasmbin.Within(err, "type %d's %s", idx, what)
			}
		}
		if k == 0 {
			params = n
		}
	}
	w.typeParams = append(w.typeParams, params)
	return nil
}

func typeWhat(idx int, what string) string {
	return "the number of type " + itoa(idx) + "'s " + what
}

// imports walks the import section: functions, tables, memories, globals and tags.
func (w *walker) imports() error {
	r := &w.r
	n, err := count(r, "the number of imports", 0, 4, uint64(w.l.MaxImports), "maxImports")
	if err != nil {
		return err
	}
	w.info.Imports = int(n)
	for i := uint32(0); i < n; i++ {
		mod, err := r.Name("import module name")
		if err != nil {
			return wasmbin.Within(err, "import %d", i)
		}
		field, err := r.Name("import name")
		if err != nil {
			return wasmbin.Within(err, "import %d", i)
		}
		if err := w.importDesc(mod, field); err != nil {
			return wasmbin.Within(err, "import %d (%s.%s)", i, mod, field)
		}
	}
	return nil
}

func (w *walker) importDesc(mod, field []byte) error {
	r := &w.r
	kind, err := r.Byte("import kind")
	if err != nil {
		return err
	}
	switch kind {
	case 0x00:
		w.info.ImportedFunctions++
		w.info.Functions++
		if uint64(w.info.Functions) > uint64(w.l.MaxFunctions) {
			return limitErr("the number of functions", uint64(w.info.Functions), uint64(w.l.MaxFunctions), "", "maxFunctions")
		}
		_, err = r.U32("type index")
		return err
	case 0x01:
		e, err := w.tableType()
		if err != nil {
			return err
		}
		return w.importTable(e, mod, field)
	case 0x02:
		return w.memory(true)
	case 0x03:
		w.info.Globals++
		if uint64(w.info.Globals) > uint64(w.l.MaxGlobals) {
			return limitErr("the number of globals", uint64(w.info.Globals), uint64(w.l.MaxGlobals), "", "maxGlobals")
		}
		return r.GlobalType()
	case 0x04:
		return r.TagType()
	}
	return malformed(r.Pos-1, "invalid import kind 0x%02x", kind)
}

// functions walks the function section. Its type indices are not stored: the code section reads
// them again, one a body, through funcTypes.
func (w *walker) functions() error {
	r := &w.r
	n, err := count(r, "the number of functions", uint64(w.info.ImportedFunctions), 1, uint64(w.l.MaxFunctions), "maxFunctions")
	if err != nil {
		return err
	}
	w.funcCount = n
	w.info.Functions += int(n)
	w.funcTypes = wasmbin.Reader{B: r.B, Pos: r.Pos, End: r.End}
	for i := uint32(0); i < n; i++ {
		if _, err := r.U32("type index"); err != nil {
			return wasmbin.Within(err, "function %d", w.info.ImportedFunctions+int(i))
		}
	}
	return nil
}

// memories walks the memory section; a module has one memory at most, imported or defined.
func (w *walker) memories() error {
	n, err := count(&w.r, "the number of memories", 0, 2, noLimit, "")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := w.memory(false); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) memory(imported bool) error {
	r := &w.r
	start := r.Pos
	if w.memCount++; w.memCount > 1 {
		return malformed(start, "a second memory: wazero supports one memory a module")
	}
	flag, err := r.Byte("memory limits")
	if err != nil {
		return err
	}
	switch {
	case flag >= 0x04 && flag <= 0x07:
		return malformed(start, "64-bit memories (memory64) are not supported")
	case flag > 0x03:
		return malformed(start, "invalid memory limits flag 0x%02x", flag)
	}
	m := &Memory{HasMax: flag&1 != 0, Shared: flag&2 != 0, Imported: imported}
	if m.Min, err = r.U32("memory minimum"); err != nil {
		return err
	}
	if m.HasMax {
		if m.Max, err = r.U32("memory maximum"); err != nil {
			return err
		}
	}
	if m.Min > w.l.MaxMemoryPages {
		return limitErr("the memory's initial size", uint64(m.Min), uint64(w.l.MaxMemoryPages), "pages", "memoryMiB")
	}
	w.info.Memory = m
	return nil
}

// globals walks the global section: a global type and a constant initializer each.
func (w *walker) globals() error {
	r := &w.r
	n, err := count(r, "the number of globals", uint64(w.info.Globals), 3, uint64(w.l.MaxGlobals), "maxGlobals")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := r.GlobalType(); err != nil {
			return wasmbin.Within(err, "global %d", w.info.Globals)
		}
		if err := r.ConstExpr(); err != nil {
			return wasmbin.Within(err, "global %d", w.info.Globals)
		}
		w.info.Globals++
	}
	return nil
}

// exports walks the export section.
func (w *walker) exports() error {
	r := &w.r
	n, err := count(r, "the number of exports", 0, 3, uint64(w.l.MaxExports), "maxExports")
	if err != nil {
		return err
	}
	w.info.Exports = int(n)
	for i := uint32(0); i < n; i++ {
		if _, err := r.Name("export name"); err != nil {
			return wasmbin.Within(err, "export %d", i)
		}
		kind, err := r.Byte("export kind")
		if err != nil {
			return wasmbin.Within(err, "export %d", i)
		}
		if kind > 0x04 {
			return malformed(r.Pos-1, "export %d: invalid export kind 0x%02x", i, kind)
		}
		if _, err := r.U32("export index"); err != nil {
			return wasmbin.Within(err, "export %d", i)
		}
	}
	return nil
}

// elements walks the element section: the eight encodings of a segment (flags 0 to 7: function
// indices or constant expressions; active, passive or declarative; table index explicit or not).
func (w *walker) elements() error {
	r := &w.r
	n, err := count(r, "the number of element segments", 0, 3, uint64(w.l.MaxElemSegments), "maxElemSegments")
	if err != nil {
		return err
	}
	w.info.ElemSegments = int(n)
	for i := uint32(0); i < n; i++ {
		if err := w.element(); err != nil {
			return wasmbin.Within(err, "element segment %d", i)
		}
	}
	return nil
}

func (w *walker) element() error {
	r := &w.r
	start := r.Pos
	flag, err := r.U32("element segment flags")
	if err != nil {
		return err
	}
	if flag > 7 {
		return malformed(start, "invalid element segment flags %d", flag)
	}
	if flag&2 != 0 && flag&1 == 0 { // active with an explicit table index
		if _, err := r.U32("table index"); err != nil {
			return err
		}
	}
	if flag&1 == 0 { // active: an offset
		if err := r.ConstExpr(); err != nil {
			return err
		}
	}
	exprs := flag&4 != 0
	if flag&3 != 0 { // anything but flags 0 and 4 has an element kind or reference type
		if exprs {
			err = elemRefType(r)
		} else {
			err = r.Zero("element kind") // 0x00, funcref
		}
		if err != nil {
			return err
		}
	}
	m, err := count(r, "the number of element entries (all segments)", w.info.ElemEntries, 1, w.l.MaxElemEntries, "maxElemEntries")
	if err != nil {
		return err
	}
	w.info.ElemEntries += uint64(m)
	for j := uint32(0); j < m; j++ {
		if exprs {
			err = r.ConstExpr()
		} else {
			_, err = r.U32("function index")
		}
		if err != nil {
			return wasmbin.Within(err, "entry %d", j)
		}
	}
	return nil
}

// code walks the code section: each body's size, its locals, and that it ends with end. The
// instructions are left to wazero's validation.
func (w *walker) code() error {
	r := &w.r
	w.codeSeen = true
	start := r.Pos
	n, err := r.U32("the number of function bodies")
	if err != nil {
		return err
	}
	if n != w.funcCount {
		return malformed(start, "%d function bodies for the %d functions the function section declares", n, w.funcCount)
	}
	if err := r.Fit(start, "function bodies", n, 3); err != nil {
		return err
	}
	secEnd := r.End
	for i := uint32(0); i < n; i++ {
		idx := w.info.ImportedFunctions + int(i)
		if err := w.body(idx, secEnd); err != nil {
			return wasmbin.Within(err, "function %d", idx)
		}
		r.End = secEnd
	}
	return nil
}

func (w *walker) body(idx, secEnd int) error {
	r := &w.r
	start := r.Pos
	size, err := r.U32("body size")
	if err != nil {
		return err
	}
	if size > w.l.MaxFunctionBytes {
		return limitErr("function "+itoa(idx)+"'s body", uint64(size), uint64(w.l.MaxFunctionBytes), "bytes", "maxFunctionBytes")
	}
	if uint64(size) > uint64(r.Left()) {
		return malformed(start, "body of %d bytes overruns the code section (%d bytes left)", size, r.Left())
	}
	r.End = r.Pos + int(size)

	var locals uint64
	if ti, err := w.funcTypes.U32("type index"); err == nil && uint64(ti) < uint64(len(w.typeParams)) {
		locals = uint64(w.typeParams[ti]) // an unknown type is wazero's to report
	}
	decls, err := count(r, "local declarations", 0, 2, noLimit, "")
	if err != nil {
		return err
	}
	for j := uint32(0); j < decls; j++ {
		k, err := r.U32("local count")
		if err != nil {
			return err
		}
		if err := r.ValType("local type"); err != nil {
			return err
		}
		locals += uint64(k)
	}
	if locals > uint64(w.l.MaxLocals) {
		return limitErr("function "+itoa(idx)+"'s number of params and locals", locals, uint64(w.l.MaxLocals), "", "maxLocals")
	}
	if w.info.Locals += locals; w.info.Locals > w.l.MaxTotalLocals {
		return limitErr("the number of params and locals of all functions", w.info.Locals, w.l.MaxTotalLocals, "", "maxTotalLocals")
	}
	if r.Pos == r.End || r.B[r.End-1] != 0x0b {
		return malformed(start, "body does not end with end (0x0b)")
	}
	r.Pos = r.End

	w.info.CodeBytes += int64(size)
	if int(size) > w.info.LargestFunction {
		w.info.LargestFunction, w.info.LargestFunctionIndex = int(size), idx
	}
	w.info.MostLocals = max(w.info.MostLocals, int(locals))
	return nil
}

// data walks the data section: active (forms 0 and 2, memory 0) and passive (1) segments.
func (w *walker) data() error {
	r := &w.r
	n, err := count(r, "the number of data segments", 0, 2, uint64(w.l.MaxDataSegments), "maxDataSegments")
	if err != nil {
		return err
	}
	w.info.DataSegments = int(n)
	for i := uint32(0); i < n; i++ {
		if err := w.dataSegment(); err != nil {
			return wasmbin.Within(err, "data segment %d", i)
		}
	}
	return nil
}

func (w *walker) dataSegment() error {
	r := &w.r
	start := r.Pos
	form, err := r.U32("data segment form")
	if err != nil {
		return err
	}
	switch form {
	case 0:
		err = r.ConstExpr()
	case 1:
	case 2:
		var mem uint32
		if mem, err = r.U32("memory index"); err == nil && mem != 0 {
			return malformed(start, "memory index %d: wazero supports memory 0 only", mem)
		}
		if err == nil {
			err = r.ConstExpr()
		}
	default:
		return malformed(start, "invalid data segment form %d", form)
	}
	if err != nil {
		return err
	}
	_, err = r.Bytes("data")
	return err
}

// tags walks the tag section (exception handling: wazero refuses it unless that is enabled).
func (w *walker) tags() error {
	r := &w.r
	n, err := count(r, "the number of tags", 0, 2, noLimit, "")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := r.TagType(); err != nil {
			return wasmbin.Within(err, "tag %d", i)
		}
	}
	return nil
}
