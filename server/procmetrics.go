package server

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"syscall"
)

// The process's own health beside the runtime's counters: what an operator watches for a leak
// (goroutines, heap, open files) or a collector under pressure (GC cycles), read without
// stopping the world (runtime/metrics), under the names Prometheus' Go and process collectors
// use, so existing dashboards read them.

// goSamples are the runtime/metrics the gauges below read.
var goSamples = []string{
	"/sched/goroutines:goroutines",
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/goal:bytes",
	"/gc/cycles/total:gc-cycles",
	"/memory/classes/total:bytes",
}

// writeProcessMetrics writes the Go runtime's and the process's gauges in Prometheus' text
// format. A value the platform does not give (open files off Linux) is left out.
func writeProcessMetrics(w io.Writer) {
	s := make([]metrics.Sample, len(goSamples))
	for i, n := range goSamples {
		s[i].Name = n
	}
	metrics.Read(s)
	value := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	metric := func(name, typ, help string, v uint64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", name, help, name, typ, name, v)
	}
	metric("go_goroutines", "gauge", "Goroutines that exist now.", value(0))
	metric("go_heap_objects_bytes", "gauge", "Bytes of live and not yet collected heap objects.", value(1))
	metric("go_gc_heap_goal_bytes", "gauge", "The heap size the next garbage collection aims at.", value(2))
	metric("go_gc_cycles_total", "counter", "Garbage collections completed.", value(3))
	metric("go_memory_total_bytes", "gauge", "All memory the Go runtime has mapped (heap, stacks, its own).", value(4))
	if n, ok := openFiles(); ok {
		metric("process_open_fds", "gauge", "File descriptors the process holds open (connections included).", uint64(n))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		metric("process_max_fds", "gauge", "The most file descriptors the process may open.", lim.Cur)
	}
}

// maxCountedFiles bounds the listing openFiles reads.
const maxCountedFiles = 1 << 20

// openFiles counts the process's open file descriptors where the platform lists them
// (/proc/self/fd).
func openFiles() (int, bool) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(maxCountedFiles)
	if err != nil && err != io.EOF {
		return 0, false
	}
	return len(names) - 1, true // less the descriptor of the listing itself
}
