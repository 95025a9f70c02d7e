package engine

import (
	"bufio"
	"runtime"

	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
)

// What the memory budget (Admission.MemoryBudget) is charged. Each figure is an upper bound of
// what the host really holds, measured with the soak test and the hostile-module tests (such as
// runtime's TestHostileModulesAreContained); docs/SECURITY.md gives the figures behind them.
const (
	// StackReserve is the most wazero's call stack for one run can hold: it lives in the host's
	// heap, outside the run's memory limit, grows by doubling while the guest recurses, and stops
	// at a ceiling of about 50 MB (wazevo's callStackCeiling) — after growing to ~100 MB, with the
	// 50 MB it grew from still alive during the copy. wazero 1.12 cannot bound it lower; the
	// instrumentation does (interrupt.StackCharge), for a module whose frames were measured
	// (framed.go). A run of any other is charged this.
	StackReserve = 160 << 20
	// RunOverhead is what a run holds beyond its linear memory and stack besides its module:
	// the instance's structures, the call's buffers, the run's logs and result.
	RunOverhead = 4 << 20
)

// RunCharge is what a run of m, compiled as c (nil: not known), may hold of the host's memory
// while it runs:
//   - its memory limit: the linear memories of the module and of the Extism kernel, and its
//     tables, which the memory meter enforces together;
//   - as much again for the host's copy of its output (Extism copies the whole output block out
//     of the kernel's memory before its size can be checked against maxOutputBytes);
//   - the wasm call stack: StackReserve, or interrupt.StackCharge when c's module was
//     instrumented with its measured frames (framed.go), which bound the stack's bytes;
//   - what the host buffers for one host call at a time: a fetch's response, a file read or a
//     write (their limits, the output's maxFileBytes among them), and the run's logs;
//   - the instance's own structures, proportional to the module (function instances, tables'
//     Go slices, the data it copies in), and a fixed overhead.
func RunCharge(m *Module, c *Compiled) int64 {
	l := m.Limits
	mem := l.MemoryMiB << 20
	io := max(l.MaxFetchBytes, l.MaxFileBytes, l.MaxWriteBytes, m.OutputFileBytes)
	return 2*mem + stackCharge(c != nil && c.Native != nil && c.Native.Framed) + io + l.MaxLogBytes + m.Size + instElemEntry*int64(m.Info.ElemEntries) + RunOverhead
}

// ScriptStack is what a script's run is charged for its wasm call stack. The interpreters are
// instrumented with frame tables their tests check on amd64 (see package wazevoframes); on
// another architecture nothing checked them.
func ScriptStack() int64 { return stackCharge(runtime.GOARCH == "amd64") }

// stackCharge is what a run's wasm call stack is charged: the instrumentation's bound
// (interrupt.StackCharge) when the weights are the module's measured frames, else all wazero's
// own ceiling lets it hold.
func stackCharge(measured bool) int64 {
	if measured {
		return interrupt.StackCharge
	}
	return StackReserve
}

// Compilation charges (measured with wazero 1.12's optimizing compiler on real and synthetic
// modules; see compilechild.go for why compiling happens in a child process): a compilation is
// charged what it may hold — Admission.CompileMemory, enforced in the child — plus what loading
// its result from the cache costs this process; a compiled module kept for later runs holds its
// machine code and per-function, per-segment and per-element bookkeeping.
const (
	cacheLoadBase     = 4 << 20
	cacheLoadCode     = 12 // bytes per byte of code, loading compiled code from the cache
	warmBase          = 4 << 20
	warmCode          = 16  // per byte of code
	warmModule        = 2   // per byte of the module (its data, copied at each instantiation)
	warmDataSegment   = 100 // per data segment
	warmElemEntry     = 56  // per element entry
	instElemEntry     = 48  // per element entry, in each instance
	defaultBudgetMin  = 1 << 30
	defaultBudgetPart = 2 // of the machine's (or cgroup's) memory
)

// CompileCharge is what compiling m may hold at its peak, child and cache load included.
func CompileCharge(a AdmissionConfig, m *Module) int64 {
	return a.CompileMemory + cacheLoadBase + cacheLoadCode*m.Info.CodeBytes + m.Size
}

// WarmCharge is what m's compiled module holds while it is kept for later runs.
func WarmCharge(m *Module) int64 {
	return warmBase + warmCode*m.Info.CodeBytes + warmModule*m.Size +
		warmDataSegment*int64(m.Info.DataSegments) + warmElemEntry*int64(m.Info.ElemEntries)
}

// DefaultMemoryBudget is half of the memory this process may use — the cgroup's limit when
// there is one, else the machine's — and at least 1 GiB.
func DefaultMemoryBudget() int64 {
	total := machineMemory()
	if c := cgroupMemoryLimit(); c > 0 && (total == 0 || c < total) {
		total = c
	}
	return max(total/defaultBudgetPart, defaultBudgetMin)
}

func machineMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupMemoryLimit reads cgroup v2's memory.max of this process's cgroup ("max": no limit).
func cgroupMemoryLimit() int64 {
	data, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
