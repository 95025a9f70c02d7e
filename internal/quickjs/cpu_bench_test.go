package quickjs

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/interleave"
)

// cpuWork is pure JavaScript work — arithmetic in a loop, an object used as a map, JSON and
// strings — that times itself with performance.now() and returns [milliseconds, a checksum].
const cpuWork = `function work() {
  const t = performance.now();
  let s = 0;
  for (let i = 0; i < 300000; i++) s += i % 7;
  const d = {};
  for (let i = 0; i < 30000; i++) d[i % 997] = (d[i % 997] || 0) + i * i;
  const o = [];
  for (let i = 0; i < 3000; i++) o.push(JSON.stringify({i, s: String(i).repeat(3)}));
  return [performance.now() - t, s + Object.keys(d).length + o.join("").length];
}`

// peerScript runs cpuWork in quickjs-emscripten (QuickJS-NG compiled by Emscripten, on node's
// V8): five fresh contexts, the work timed in each, the last printed, once V8 has optimised its
// code as it would for a server that runs many.
const peerScript = `import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
import variant from "@jitl/quickjs-ng-wasmfile-release-sync";
const QuickJS = await newQuickJSWASMModuleFromVariant(variant);
let last;
for (let i = 0; i < 5; i++) {
  const vm = QuickJS.newContext();
  const h = vm.unwrapResult(vm.evalCode("(" + process.argv[2] + ")()"));
  last = vm.dump(h);
  h.dispose();
  vm.dispose();
}
console.log(JSON.stringify(last));
`

// BenchmarkCPU measures pure JavaScript work (cpuWork, timed by the guest itself) in the
// reactor as runs use it — instrumented, stopped by interrupt.Stop — against the same reactor
// with no instrumentation at all (the floor: nothing could stop it), and, when
// SKILLBOX_QUICKJS_EMSCRIPTEN names a directory where quickjs-emscripten is installed, the same
// QuickJS built by Emscripten on node's V8, interleaved:
//
//	npm install --prefix DIR quickjs-emscripten-core@0.32.0 @jitl/quickjs-ng-wasmfile-release-sync@0.32.0
//	SKILLBOX_QUICKJS_EMSCRIPTEN=DIR go test -run '^$' -bench 'BenchmarkCPU' -benchtime 10x ./internal/quickjs/
//
// Target: stopped <= 1.1x off.
func BenchmarkCPU(b *testing.B) {
	ctx := context.Background()
	stopped := compiledFor(b, 1024)
	off, err := compile(ctx, testRuntimeConfig(b, 1024), false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { off.Close(ctx) })
	src := cpuWork + "\n" + skill(`() => work()`)
	h := newHost(b, &hostfuncs.Grant{})
	ms := map[string][]float64{}
	guest := func(name string, c *Compiled) interleave.Contender {
		return interleave.Contender{Name: name, F: func() {
			res, err := Run(ctx, c, Program{Source: src}, h)
			var v []float64
			if err != nil || json.Unmarshal(res.Value, &v) != nil || len(v) != 2 {
				b.Fatal(err, string(res.Value))
			}
			ms[name] = append(ms[name], v[0])
		}}
	}
	contenders := []interleave.Contender{guest("stopped", stopped), guest("off", off)}
	if dir := os.Getenv("SKILLBOX_QUICKJS_EMSCRIPTEN"); dir != "" {
		node, err := exec.LookPath("node")
		if err != nil {
			b.Fatal("SKILLBOX_QUICKJS_EMSCRIPTEN is set, but node is not on PATH")
		}
		script := filepath.Join(dir, "skillbox-cpu-bench.mjs")
		if err := os.WriteFile(script, []byte(peerScript), 0o644); err != nil {
			b.Fatal(err)
		}
		contenders = append(contenders, interleave.Contender{Name: "emscripten", F: func() {
			out, err := exec.Command(node, script, cpuWork).Output()
			var v []float64
			if err != nil || json.Unmarshal(out, &v) != nil || len(v) != 2 {
				b.Fatal(err, string(out))
			}
			ms["emscripten"] = append(ms["emscripten"], v[0])
		}})
	}
	interleave.Run(b, contenders...)
	p50 := interleave.Medians(b, "work-ms", ms)
	b.ReportMetric(p50["stopped"]/p50["off"], "stopped/off")
	if p50["emscripten"] > 0 {
		b.ReportMetric(p50["stopped"]/p50["emscripten"], "stopped/emscripten")
		b.ReportMetric(p50["off"]/p50["emscripten"], "off/emscripten")
	}
}
