package wasmcheck

import "github.com/skillbox-dev/skillbox/internal/wasmbin"

// Tables are where a module can make the host allocate after it was checked: wazero's
// TableInstance.Grow appends the new entries (8 bytes each) with no bound but the table's
// declared maximum, up to 2^32-1 of them. So every table must run with a maximum, and the maxima
// of all tables together must fit MaxTableEntries: an imported table must declare one, and a
// defined table that lacks one, or declares more than its share, is given its share by
// re-encoding the table section. table.grow past it then returns -1, as the spec allows a grow
// to fail.

// tableEntry is one table of the table section (or an import's table type), with where its
// limits are, so that they can be re-encoded.
type tableEntry struct {
	at     span // the whole table type, including an initializer
	limits span // its limits: flag, min, max
	t      Table
	hasMax bool
}

// tableType reads a table type: [0x40 0x00] reftype limits [init expr], the 0x40 form carrying an
// initializer as wazero's decodeTable reads it.
func (w *walker) tableType() (tableEntry, error) {
	r := &w.r
	e := tableEntry{at: span{start: r.Pos}}
	if uint64(len(w.info.Tables)) >= uint64(w.l.MaxTables) {
		return e, limitErr("the number of tables", uint64(len(w.info.Tables))+1, uint64(w.l.MaxTables), "", "maxTables")
	}
	hasInit := r.Pos < r.End && r.B[r.Pos] == 0x40
	if hasInit {
		r.Pos++
		if err := r.Zero("table prefix"); err != nil {
			return e, err
		}
	}
	var err error
	if e.t.RefType, err = refType(r, "table element type"); err != nil {
		return e, err
	}
	e.limits.start = r.Pos
	flag, err := r.Byte("table limits")
	if err != nil {
		return e, err
	}
	switch {
	case flag == 0x02 || flag == 0x03:
		return e, malformed(r.Pos-1, "tables cannot be shared")
	case flag >= 0x04 && flag <= 0x07:
		return e, malformed(r.Pos-1, "64-bit tables are not supported")
	case flag > 0x03:
		return e, malformed(r.Pos-1, "invalid table limits flag 0x%02x", flag)
	}
	if e.t.Min, err = r.U32("table minimum"); err != nil {
		return e, err
	}
	if e.hasMax = flag == 0x01; e.hasMax {
		if e.t.Max, err = r.U32("table maximum"); err != nil {
			return e, err
		}
		if e.t.Max < e.t.Min {
			return e, malformed(e.limits.start, "table maximum %d is below its minimum %d", e.t.Max, e.t.Min)
		}
	}
	e.limits.end = r.Pos
	if hasInit {
		if err := r.ConstExpr(); err != nil {
			return e, wasmbin.Within(err, "table initializer")
		}
	}
	e.at.end = r.Pos
	return e, nil
}

// importTable takes an imported table's declared maximum out of the budget: it cannot be given
// one, so it must declare one that fits.
func (w *walker) importTable(e tableEntry, mod, field []byte) error {
	what := func() string {
		return "imported table " + itoa(len(w.info.Tables)) + " (" + string(mod) + "." + string(field) + ")'s maximum"
	}
	if !e.hasMax {
		le := limitErr(what(), Unbounded, w.tableLeft, "entries", "maxTableEntries")
		le.Hint = "declare a maximum on the imported table (its growth cannot be bounded otherwise)"
		return le
	}
	if uint64(e.t.Max) > w.tableLeft {
		return limitErr(what(), uint64(e.t.Max), w.tableLeft, "entries", "maxTableEntries")
	}
	w.tableLeft -= uint64(e.t.Max)
	e.t.Imported = true
	w.info.Tables = append(w.info.Tables, e.t)
	w.info.TableEntries += uint64(e.t.Max)
	return nil
}

// tables walks the table section, shares what is left of the budget among its tables, and
// re-encodes the section if any of them needed a maximum.
func (w *walker) tables() error {
	r := &w.r
	countAt := r.Pos
	n, err := count(r, "the number of tables", uint64(len(w.info.Tables)), 3, uint64(w.l.MaxTables), "maxTables")
	if err != nil {
		return err
	}
	w.defined = make([]tableEntry, 0, n)
	for i := uint32(0); i < n; i++ {
		e, err := w.tableType()
		if err != nil {
			return wasmbin.Within(err, "table %d", len(w.info.Tables)+int(i))
		}
		w.defined = append(w.defined, e)
	}
	if err := w.shareTables(); err != nil {
		return err
	}
	for _, e := range w.defined {
		if e.t.Capped {
			w.edits = append(w.edits, edit{at: w.tableSec, with: w.encodeTables(countAt)})
			break
		}
	}
	return nil
}

// shareTables checks that the defined tables' minima fit what is left of the budget, then gives
// each one the most it may grow to. When the maxima the tables declare fit together (counting a
// table without one at its minimum), they keep them, and the tables without one share the rest
// evenly. Otherwise every table gets its minimum and an even share of the rest, but no more than
// it declared. Either way the maxima then fit together, so a second Check changes nothing.
func (w *walker) shareTables() error {
	first := len(w.info.Tables)
	var mins, need uint64
	unbounded := 0
	for i, e := range w.defined {
		if mins+uint64(e.t.Min) > w.tableLeft {
			return limitErr("table "+itoa(first+i)+"'s minimum", uint64(e.t.Min), w.tableLeft-mins, "entries", "maxTableEntries")
		}
		mins += uint64(e.t.Min)
		if e.hasMax {
			need += uint64(e.t.Max)
		} else {
			need += uint64(e.t.Min)
			unbounded++
		}
	}
	keep := need <= w.tableLeft
	spare, sharers := w.tableLeft-mins, len(w.defined)
	if keep {
		spare, sharers = w.tableLeft-need, unbounded
	}
	k := 0 // sharers so far
	for i := range w.defined {
		e := &w.defined[i]
		if !keep || !e.hasMax {
			share := spare / uint64(sharers)
			if uint64(k) < spare%uint64(sharers) {
				share++
			}
			k++
			if m := min(uint64(e.t.Min)+share, 1<<32-1); !e.hasMax || uint64(e.t.Max) > m {
				e.t.Max, e.t.Capped = uint32(m), true
			}
		}
		w.tableLeft -= uint64(e.t.Max)
		w.info.Tables = append(w.info.Tables, e.t)
		w.info.TableEntries += uint64(e.t.Max)
	}
	return nil
}

// encodeTables re-encodes the table section: the count and every table type as they were, but
// the limits of the capped ones, which become (flag 1, min, max).
func (w *walker) encodeTables(countAt int) []byte {
	b := w.r.B
	body := make([]byte, 0, w.tableSec.end-countAt+11*len(w.defined))
	body = append(body, b[countAt:w.defined[0].at.start]...)
	for _, e := range w.defined {
		if !e.t.Capped {
			body = append(body, b[e.at.start:e.at.end]...)
			continue
		}
		body = append(body, b[e.at.start:e.limits.start]...)
		body = append(body, 0x01)
		body = wasmbin.AppendU32(body, e.t.Min)
		body = wasmbin.AppendU32(body, e.t.Max)
		body = append(body, b[e.limits.end:e.at.end]...)
	}
	sec := make([]byte, 0, 6+len(body))
	sec = append(sec, secTable)
	sec = wasmbin.AppendU32(sec, uint32(len(body)))
	return append(sec, body...)
}
