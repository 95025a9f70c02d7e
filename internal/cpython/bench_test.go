package cpython

import (
	"context"
	"encoding/json"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/memimage"
)

const benchSkill = `def execute(args, ctx):
    return {"hello": args["name"], "n": args["n"] * 2, "e": ctx.env("A")}
`

// benchPython is the same work for a python3 subprocess: arguments in argv, the result on stdout.
const benchPython = `import json, os, sys
args = json.loads(sys.argv[1])
print(json.dumps({"hello": args["name"], "n": args["n"] * 2, "e": os.environ.get("A")}))
`

// BenchmarkRun runs a small skill (one host call) in a fresh instance, interleaved in the same
// rounds (package internal/interleave) with its floor — a bare instantiate (no start function)
// and close of the same snapshot, its memory image copied in as the run's is — and with a python3 subprocess doing the same work (when
// python3 is on PATH). Read the ratios; the absolute times swing with load.
//
//	go test -run '^$' -bench BenchmarkRun -benchtime 200x ./internal/cpython/
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	c := compiledFor(b, 1024)
	dir := skillDir(b, map[string]string{"execute.py": benchSkill})
	h := newHost(b, &hostfuncs.Grant{Env: map[string]string{"A": "a"}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 20}})
	dctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	code, err := c.Code(ctx, dir, "", []byte(benchSkill), 1<<20, nil)
	if err != nil {
		b.Fatal(err)
	}
	// The snapshot as it was before its memory became an image: ten thousand data segments,
	// evaluated and copied at each instantiation.
	whole, err := interrupt.InstrumentWithTable(pythonWASM, pythonFrames)
	if err != nil {
		b.Fatal(err)
	}
	segments, err := c.runtime.CompileModule(ctx, whole)
	if err != nil {
		b.Fatal(err)
	}
	defer segments.Close(ctx)
	contenders := []interleave.Contender{
		{Name: "floor", F: func() {
			if err := c.Start(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "segments", F: func() {
			m, err := c.runtime.InstantiateModule(ctx, segments, wazero.NewModuleConfig().WithName("").WithStartFunctions())
			if err != nil {
				b.Fatal(err)
			}
			_ = m.Close(ctx)
		}},
		{Name: "run", F: func() {
			if _, err := Run(dctx, c, Program{Dir: dir, Args: []byte(`{"name":"x","n":21}`)}, h); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "run-code", F: func() {
			if _, err := Run(dctx, c, Program{Dir: dir, Args: []byte(`{"name":"x","n":21}`), Code: code}, h); err != nil {
				b.Fatal(err)
			}
		}},
	}
	// Debian's python3, not a version manager's shim on PATH (a shell script that costs more
	// than the interpreter).
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		py, err = exec.LookPath("python3")
	}
	if err == nil {
		contenders = append(contenders, interleave.Contender{Name: "python3", F: func() {
			cmd := exec.Command(py, "-I", "-c", benchPython, `{"name":"x","n":21}`)
			cmd.Env = []string{"A=a"}
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}})
	}
	p50 := interleave.Run(b, contenders...)
	b.ReportMetric(p50["run"]/p50["floor"], "run/floor")
	b.ReportMetric(p50["floor"]/p50["segments"], "floor/segments")
	b.ReportMetric(p50["run-code"]/p50["run"], "run-code/run")
	if p50["python3"] > 0 {
		b.ReportMetric(p50["run"]/p50["python3"], "run/python3")
	}
}

// BenchmarkHostCall measures one brokered SkillContext call (ctx.env) as the skill sees it:
// JSON encoding in Python, the imported host function, the broker, the reply copied back and
// decoded. The guest times 2000 calls with perf_counter; the metric is the median per call.
//
//	go test -run '^$' -bench BenchmarkHostCall -benchtime 20x ./internal/cpython/
func BenchmarkHostCall(b *testing.B) {
	c := compiledFor(b, 1024)
	dir := skillDir(b, map[string]string{"execute.py": `import time
def execute(args, ctx):
    n = 2000
    t0 = time.perf_counter_ns()
    for _ in range(n):
        ctx.env("A")
    t1 = time.perf_counter_ns()
    for _ in range(n):
        pass
    return ((t1 - t0) - (time.perf_counter_ns() - t1)) / n`})
	g := &hostfuncs.Grant{Env: map[string]string{"A": "a"}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 20}}
	var per []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), c, Program{Dir: dir}, newHost(b, g))
		if err != nil {
			b.Fatal(err)
		}
		var ns float64
		if err := json.Unmarshal(res.Value, &ns); err != nil {
			b.Fatal(err)
		}
		per = append(per, ns)
	}
	slices.Sort(per)
	b.ReportMetric(per[len(per)/2], "ns/call-p50")
}

// BenchmarkMemory measures the Go heap that concurrent runs hold: 8 runs sleep at once (each in
// its own instance) while the heap is read, against the heap before they started.
//
//	go test -run '^$' -bench BenchmarkMemory -benchtime 3x ./internal/cpython/
func BenchmarkMemory(b *testing.B) {
	const n = 8
	c := compiledFor(b, 1024)
	dir := skillDir(b, map[string]string{"execute.py": "import time\ndef execute(args, ctx):\n    time.sleep(0.6)\n"})
	var per []float64
	for i := 0; i < b.N; i++ {
		var before, during runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		for j := 0; j < n; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := Run(context.Background(), c, Program{Dir: dir}, newHost(b, &hostfuncs.Grant{})); err != nil {
					b.Error(err)
				}
			}()
		}
		time.Sleep(400 * time.Millisecond)
		runtime.GC()
		runtime.ReadMemStats(&during)
		wg.Wait()
		per = append(per, float64(during.HeapAlloc-before.HeapAlloc)/n/(1<<20))
	}
	slices.Sort(per)
	b.ReportMetric(per[len(per)/2], "MiB/instance")
}

// cpuWork is about 10 ms of pure-Python work for a native python3 on this machine; the skill and
// the python3 script both time it themselves (time.perf_counter_ns), so start-up is not in it.
const cpuWork = `
import time
def work():
    t = time.perf_counter_ns()
    d = {}
    for i in range(60000):
        d[i % 997] = d.get(i % 997, 0) + i * i
    s = sorted(d.values())
    return time.perf_counter_ns() - t, s[-1]
`

// BenchmarkCPU measures pure-Python work (cpuWork, timed by the guest itself) in the interpreter
// as runs use it — instrumented and stopped by interrupt.Stop — against the same interpreter
// under wazero's interruption (how runs were stopped before), the interpreter left as it was
// built with no interruption at all (the floor), and native python3 (when on PATH), interleaved.
// Targets: stopped <= 1.1x off; stopped <= 6x python3 (stretch 3x).
//
//	go test -run '^$' -bench BenchmarkCPU -benchtime 20x ./internal/cpython/
func BenchmarkCPU(b *testing.B) {
	ctx := context.Background()
	stopped := compiledFor(b, 1024)
	compileWith := func(closeOnDone, instrument bool) *Compiled {
		code, img, err := prepareNow()
		if !instrument {
			code, img, err = memimage.Split(pythonWASM)
		}
		if err != nil {
			b.Fatal(err)
		}
		c, err := compile(ctx, testConfig(b, 1024).WithCloseOnContextDone(closeOnDone), code, img)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close(ctx) })
		return c
	}
	interrupted, off := compileWith(true, true), compileWith(false, false)
	dir := skillDir(b, map[string]string{"execute.py": cpuWork + "\ndef execute(args, ctx):\n    return work()[0]\n"})
	h := newHost(b, &hostfuncs.Grant{})
	ns := map[string][]float64{}
	guest := func(name string, c *Compiled) interleave.Contender {
		return interleave.Contender{Name: name, F: func() {
			res, err := Run(ctx, c, Program{Dir: dir}, h)
			var n float64
			if err != nil || json.Unmarshal(res.Value, &n) != nil {
				b.Fatal(err, string(res.Value))
			}
			ns[name] = append(ns[name], n)
		}}
	}
	contenders := []interleave.Contender{guest("stopped", stopped), guest("interrupted", interrupted), guest("off", off)}
	if py, err := exec.LookPath("/usr/bin/python3"); err == nil {
		contenders = append(contenders, interleave.Contender{Name: "python3", F: func() {
			out, err := exec.Command(py, "-I", "-c", cpuWork+"\nprint(work()[0])").Output()
			var n float64
			if err != nil || json.Unmarshal(out, &n) != nil {
				b.Fatal(err, string(out))
			}
			ns["python3"] = append(ns["python3"], n)
		}})
	}
	interleave.Run(b, contenders...)
	p50 := interleave.Medians(b, "work-ns", ns)
	b.ReportMetric(p50["stopped"]/p50["off"], "stopped/off")
	b.ReportMetric(p50["interrupted"]/p50["off"], "interrupted/off")
	if p50["python3"] > 0 {
		b.ReportMetric(p50["stopped"]/p50["python3"], "stopped/python3")
		b.ReportMetric(p50["off"]/p50["python3"], "off/python3")
	}
}
