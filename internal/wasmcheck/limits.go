package wasmcheck

import "github.com/skillbox-dev/skillbox/internal/wasmbin"

// Limits bound what a module may declare. A zero field takes the DefaultLimits value: a zero value
// is never "unlimited".
type Limits struct {
	MaxModuleBytes   int64  // the whole binary, before and after rewriting
	MaxFunctions     uint32 // imported + defined
	MaxFunctionBytes uint32 // one function body (the code entry's size)
	MaxLocals        uint32 // params + declared locals of one function
	// MaxTotalLocals bounds params + declared locals summed over all functions (and the local
	// names of the name section): wazero allocates 8 bytes a declared local when it decodes, so a
	// per-function bound alone lets 200,000 three-byte functions of 50,000 locals each cost 80 GB.
	MaxTotalLocals uint64
	MaxTypes       uint32 // function types, counting each member of a rec group
	MaxImports     uint32
	MaxExports     uint32
	MaxGlobals     uint32 // imported + defined
	MaxParams      uint32 // params, or results, of one function type
	MaxTables      uint32 // imported + defined
	// MaxTableEntries bounds the sum over all tables of their maximum size, after Check gave the
	// defined tables that lack one (or declare more) their share: 8 bytes of host memory an entry.
	MaxTableEntries uint64
	MaxElemSegments uint32
	MaxElemEntries  uint64 // entries summed over all element segments
	MaxDataSegments uint32
	// MaxMemoryPages bounds a memory's declared minimum: the run's memory limit, in 64 KiB pages.
	MaxMemoryPages uint32
	// MaxCustomSections bounds the custom sections (wazero keeps a copy of each when DWARF is
	// enabled, its default: ~100 bytes of bookkeeping for a 3-byte section).
	MaxCustomSections uint32
}

// DefaultLimits admit every module Skillbox ships with a wide margin (the Go guests have ~2,400
// functions, ~41,500 data segments, a largest body of ~29 KB and a funcref table of min 6,321
// without a maximum; TinyGo, Rust and AssemblyScript guests are smaller) and stay well under
// what would hurt the host. The JS-API implementation limits of browsers are the reference for
// most of the counts. Tune them here, in one place.
var DefaultLimits = Limits{
	MaxModuleBytes:    64 << 20,
	MaxFunctions:      200_000,
	MaxFunctionBytes:  2 << 20,
	MaxLocals:         50_000,
	MaxTotalLocals:    1 << 22,
	MaxTypes:          100_000,
	MaxImports:        100_000,
	MaxExports:        100_000,
	MaxGlobals:        100_000,
	MaxParams:         1_000,
	MaxTables:         16,
	MaxTableEntries:   1 << 20,
	MaxElemSegments:   100_000,
	MaxElemEntries:    1 << 17, // each costs ~45 bytes compiled and ~41 in every instance
	MaxDataSegments:   200_000,
	MaxMemoryPages:    65_536,
	MaxCustomSections: 10_000,
}

// withDefaults returns l with every zero (or negative) field taken from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxModuleBytes <= 0 {
		l.MaxModuleBytes = d.MaxModuleBytes
	}
	u32 := func(v *uint32, def uint32) {
		if *v == 0 {
			*v = def
		}
	}
	u64 := func(v *uint64, def uint64) {
		if *v == 0 {
			*v = def
		}
	}
	u32(&l.MaxFunctions, d.MaxFunctions)
	u32(&l.MaxFunctionBytes, d.MaxFunctionBytes)
	u32(&l.MaxLocals, d.MaxLocals)
	u64(&l.MaxTotalLocals, d.MaxTotalLocals)
	u32(&l.MaxTypes, d.MaxTypes)
	u32(&l.MaxImports, d.MaxImports)
	u32(&l.MaxExports, d.MaxExports)
	u32(&l.MaxGlobals, d.MaxGlobals)
	u32(&l.MaxParams, d.MaxParams)
	u32(&l.MaxTables, d.MaxTables)
	u64(&l.MaxTableEntries, d.MaxTableEntries)
	u32(&l.MaxElemSegments, d.MaxElemSegments)
	u64(&l.MaxElemEntries, d.MaxElemEntries)
	u32(&l.MaxDataSegments, d.MaxDataSegments)
	u32(&l.MaxMemoryPages, d.MaxMemoryPages)
	u32(&l.MaxCustomSections, d.MaxCustomSections)
	return l
}

// hints are the fixes a LimitError suggests, by the limit's operator-facing name.
var hints = map[string]string{
	"maxModuleBytes":    "strip debug sections (wasm-strip, wasm-opt --strip-debug) or raise maxModuleBytes",
	"maxFunctions":      "build with dead-code elimination (-Os, wasm-opt), or raise maxFunctions",
	"maxFunctionBytes":  "build with optimisations or split the function, or raise maxFunctionBytes",
	"maxLocals":         "build with optimisations or split the function, or raise maxLocals",
	"maxTotalLocals":    "build with optimisations, or raise maxTotalLocals",
	"maxTypes":          "raise maxTypes",
	"maxImports":        "raise maxImports",
	"maxExports":        "export only the entrypoint and what the host calls, or raise maxExports",
	"maxGlobals":        "raise maxGlobals",
	"maxParams":         "pass a pointer to a struct instead, or raise maxParams",
	"maxTables":         "raise maxTables",
	"maxTableEntries":   "declare a smaller table, or raise maxTableEntries",
	"maxElemSegments":   "raise maxElemSegments",
	"maxElemEntries":    "raise maxElemEntries",
	"maxDataSegments":   "merge data segments (wasm-opt --memory-packing), or raise maxDataSegments",
	"memoryMiB":         "raise limits.memoryMiB in the manifest (within the policy), or link with a smaller initial memory",
	"maxCustomSections": "strip custom sections (wasm-strip), or raise maxCustomSections",
}

// count reads a vector's length n and checks it twice before anything uses it: base+n against
// max (the limit, a LimitError for field; base counts what earlier sections declared, such as
// imported functions), then n against the bytes left, each element needing at least minSize.
// The limit comes first so that a count over both reports the limit, which says what to change.
func count(r *wasmbin.Reader, what string, base uint64, minSize int, max uint64, field string) (uint32, error) {
	start := r.Pos
	n, err := r.U32(what)
	if err != nil {
		return 0, err
	}
	if base+uint64(n) > max {
		return 0, limitErr(what, base+uint64(n), max, "", field)
	}
	if err := r.Fit(start, what, n, minSize); err != nil {
		return 0, err
	}
	return n, nil
}

// noLimit is count's max for vectors that only need to fit their bytes.
const noLimit = ^uint64(0) >> 1

// limitErr builds the LimitError for field, with its hint.
func limitErr(what string, got, max uint64, unit, field string) *LimitError {
	return &LimitError{What: what, Got: got, Max: max, Unit: unit, Field: field, Hint: hints[field]}
}
