package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// kernelPages is the Extism kernel's own memory at instantiation (16 pages, 1 MiB): it shares
// the run's memory limit with the module.
const kernelPages = 16

// TableShare is the part of a run's memory limit its tables may take, at most: a table entry
// holds 8 bytes of host memory (wazero keeps one pointer per element), uncounted by wasm's page
// limit, so the tables' maxima are set from it and reserved out of the limit.
const TableShare = 32

// ModuleKey names one bounds check: a module's content, and the limits it was checked under.
type ModuleKey struct {
	Hash   string // sha256 of the module file, hex
	Limits policy.ModuleLimits
	MemMiB int64 // the skill's memory limit, which bounds its tables and memory
}

// ModuleCheck is what bounding a module found: its size and info, or the bound it crosses.
type ModuleCheck struct {
	Size int64
	// Info is what the check learned of the module (nil when Problem is set), LinearLimit what
	// its linear memories may hold together (the memory limit less its tables' share).
	Info        *wasmcheck.Info
	LinearLimit uint64
	// Problem is the bound the module crosses and how to fix it (its Path is left to the caller);
	// Build says its hint is to build the module (which names the skill's directory).
	Problem *spec.ManifestError
	Build   bool
}

// At returns the check's problem as a problem of the module at path, in the skill directory dir
// (nil when it passed).
func (mc *ModuleCheck) At(path, dir string) *spec.ManifestError {
	if mc.Problem == nil {
		return nil
	}
	p := *mc.Problem
	p.Path = path
	if mc.Build {
		p.Hint = "build it: skillbox build " + dir
	}
	return &p
}

// CheckModule bounds what wasm declares (see wasmcheck) under the policy's module limits ml and
// the skill's memory limit, and returns the module to compile: wasm itself, or a copy whose
// tables got a maximum. A module that crosses a bound comes back with the problem, saying which
// bound and how to fix it, and no module.
func CheckModule(wasm []byte, ml policy.ModuleLimits, memMiB int64) (*ModuleCheck, []byte) {
	ml = ml.WithDefaults()
	memBytes := uint64(memMiB) << 20
	l := wasmcheck.DefaultLimits
	l.MaxModuleBytes = ml.MaxModuleBytes
	l.MaxFunctionBytes = uint32(min(ml.MaxFunctionBytes, 1<<31))
	l.MaxFunctions = uint32(min(ml.MaxFunctions, 1<<31))
	l.MaxTableEntries = min(l.MaxTableEntries, memBytes/TableShare/8)
	l.MaxMemoryPages = uint32(memBytes >> 16)
	mc := &ModuleCheck{Size: int64(len(wasm))}
	info, module, err := wasmcheck.Check(wasm, l)
	if err != nil {
		var le *wasmcheck.LimitError
		if errors.As(err, &le) {
			mc.Problem = &spec.ManifestError{Msg: le.Message(), Hint: hintFor(le)}
			return mc, nil
		}
		mc.Problem = &spec.ManifestError{Msg: err.Error(), Hint: "rebuild it: the file is not a module wazero can load"}
		return mc, nil
	}
	tableBytes := info.TableEntries * 8
	var minPages uint64 = kernelPages
	if info.Memory != nil {
		minPages += uint64(info.Memory.Min)
	}
	if tableBytes+minPages<<16 > memBytes {
		mc.Problem = &spec.ManifestError{Msg: fmt.Sprintf("needs %d MiB to start (its memory's minimum, the Extism kernel's 1 MiB, and %d KiB of tables); the memory limit is %d MiB",
			(minPages<<16+tableBytes+(1<<20)-1)>>20, tableBytes>>10, memBytes>>20), Hint: "raise limits.memoryMiB in the manifest (within the policy), or link with a smaller initial memory"}
		return mc, nil
	}
	mc.Info, mc.LinearLimit = info, memBytes-tableBytes
	return mc, module
}

// hintFor says how to get under the bound a LimitError names: the policy sets three of them,
// the memory limit sets the tables' share, the rest are fixed.
func hintFor(le *wasmcheck.LimitError) string {
	switch le.Field {
	case "maxModuleBytes", "maxFunctionBytes", "maxFunctions":
		return le.Hint + " (modules." + le.Field + " in the policy)"
	case "maxTableEntries":
		return fmt.Sprintf("a run's tables may take 1/%d of its memory limit, 8 bytes an entry: declare a smaller table, or raise limits.memoryMiB", TableShare)
	case "memoryMiB":
		return le.Hint
	}
	fix, _, _ := strings.Cut(le.Hint, ", or raise")
	if fix == "" || strings.HasPrefix(fix, "raise") {
		return "this bound is fixed: rebuild the module with optimisations, or split it"
	}
	return fix + " (this bound is fixed)"
}
