package toolset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/prompt"
	"github.com/skillbox-dev/skillbox/agent/runmodule"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// The toolset's benchmarks, in this package's style: a ratio against a floor measured in the same
// run where there is one ("x-run": Call's ns/op over rt.Run's for the same trivial skill),
// and sizes and one-off times as metrics of their own.
//
//	go test -run '^$' -bench 'ListSkills|CallOverhead|Scan' ./agent/toolset/

// writeCatalog writes exes executable skills (a skill.json and the same tiny module,
// testdata/wasm/hello.wasm) and guides instruction skills (a SKILL.md only) into dir, with
// metadata drawn as benchCatalog draws it.
func writeCatalog(tb testing.TB, dir string, exes, guides int) {
	tb.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "hello.wasm"))
	if err != nil {
		tb.Fatalf("hello.wasm: %v (run make fixtures)", err)
	}
	meta := benchCatalog(exes + guides)
	write := func(id, name, content string) {
		sd := filepath.Join(dir, id)
		if err := os.MkdirAll(sd, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sd, name), []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for i, s := range meta {
		m := s.Manifest()
		if i < exes {
			write(s.ID(), "skill.json", fmt.Sprintf(`{"id":%q,"name":%q,"description":%q,"version":"1.0.0","tags":[%q,%q],
				"parameters":{"text":{"type":"string","required":true,"description":"The input"},"n":{"type":"integer","default":1}}}`,
				s.ID(), m.Name, m.Description, m.Tags[0], m.Tags[1]))
			if err := os.WriteFile(filepath.Join(dir, s.ID(), spec.ModuleFile), wasm, 0o644); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		write(s.ID(), "SKILL.md", fmt.Sprintf("---\nname: %s\ndescription: %s\ntags: [%s, %s]\n---\n\n# %s\n\n%s\n",
			s.ID(), m.Description, m.Tags[0], m.Tags[1], m.Name, m.Description))
	}
}

// BenchmarkListSkills lists 2,000 skills (1,000 executable, 1,000 instruction-only) loaded by one
// runtime.New: what a model's list_skills call costs the host, and how large its answer and the
// system prompt are ("bytes").
func BenchmarkListSkills(b *testing.B) {
	dir := b.TempDir()
	writeCatalog(b, dir, 1000, 1000)
	rt := newRuntime(b, dir, nil)
	if n := len(toolset.ListSkills(rt)); n != 2000 {
		b.Fatalf("%d skills listed", n)
	}
	ctx := context.Background()
	cases := []struct {
		name string
		f    func() string
	}{
		{"list_skills", func() string {
			out, err := toolset.Handle(ctx, rt, toolset.ToolListSkills, nil)
			if err != nil {
				b.Fatal(err)
			}
			return out
		}},
		{"system_prompt", func() string { return prompt.System(rt) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			size := len(tc.f())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tc.f()
			}
			b.StopTimer()
			b.ReportMetric(float64(size), "bytes")
		})
	}
}

// BenchmarkScan is runtime.New (and Close) over n skills, half executable and half
// instruction-only: what loading a catalog's metadata costs at start and on every reload. A catalog
// of 100 skills should load in under 500 ms. The files are in the page cache after the first
// iteration; a cold disk is slower.
func BenchmarkScan(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			writeCatalog(b, dir, n/2, n-n/2)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Shared: testengine.Shared(b, runtime.SharedConfig{CacheDir: cacheDir})})
				if err != nil {
					b.Fatal(err)
				}
				if got := len(rt.Skills()); got != n {
					b.Fatalf("%d skills", got)
				}
				rt.Close(context.Background())
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/scan")
		})
	}
}

// BenchmarkCallOverhead is Call (and Handle, run_skill, the text protocol) of a trivial
// skill against rt.Run of the same skill, N times each in the same run: "x-run" is what routing
// a tool call adds, as a ratio of medians (see interleaved). ns/op is the median of the call
// alone; B/op and allocs/op count the call and the run together.
func BenchmarkCallOverhead(b *testing.B) {
	dir := b.TempDir()
	sd := filepath.Join(dir, "hello")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		b.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "hello.wasm"))
	if err != nil {
		b.Fatalf("hello.wasm: %v (run make fixtures)", err)
	}
	if err := os.WriteFile(filepath.Join(sd, spec.ModuleFile), wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, "skill.json"), []byte(`{"id":"hello","name":"Hello","description":"Says hi"}`), 0o644); err != nil {
		b.Fatal(err)
	}
	rt := newRuntime(b, dir, nil)
	ctx := context.Background()
	runOne := func() int {
		res, err := rt.Run(ctx, run.Request{Skill: "hello", Args: []byte(`{}`), Who: access.Local("test")})
		if err != nil {
			b.Fatal(err)
		}
		return len(res.Result)
	}
	runOne() // compile once, before anything is timed
	const text = "Let me greet.\n[RUN_MODULE]\n{\"name\": \"hello\", \"args\": {}}\n[/RUN_MODULE]\n"
	cases := []struct {
		name string
		f    func() int
	}{
		{"call", func() int {
			res, err := toolset.Call(ctx, rt, "skill_hello", []byte(`{}`))
			if err != nil {
				b.Fatal(err)
			}
			return len(res.Result)
		}},
		{"handle", func() int {
			out, err := toolset.Handle(ctx, rt, "skill_hello", []byte(`{}`))
			if err != nil {
				b.Fatal(err)
			}
			return len(out)
		}},
		{"run_skill", func() int {
			out, err := toolset.Handle(ctx, rt, toolset.ToolRunSkill, []byte(`{"skill":"hello","args":{}}`))
			if err != nil {
				b.Fatal(err)
			}
			return len(out)
		}},
		{"run_module", func() int {
			rs := runmodule.Run(ctx, rt, text)
			if len(rs) != 1 || rs[0].Err != nil {
				b.Fatal(rs)
			}
			return len(runmodule.FormatResult(rs[0]))
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			got, floor := interleaved(b.N, tc.f, runOne)
			b.StopTimer()
			b.ReportMetric(got, "ns/op")
			b.ReportMetric(floor, "run-ns/op")
			b.ReportMetric(got/floor, "x-run")
		})
	}
}

// interleaved runs f and floor n times each, alternately, and returns the median ns per call of
// each: a run takes about a millisecond, give or take a GC pause, and medians of alternating
// calls keep such pauses and any drift out of the ratio.
func interleaved(n int, f, floor func() int) (fNs, floorNs float64) {
	tf, tfloor := make([]time.Duration, n), make([]time.Duration, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		f()
		t1 := time.Now()
		floor()
		tf[i], tfloor[i] = t1.Sub(t0), time.Since(t1)
	}
	return median(tf), median(tfloor)
}

func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Nanoseconds())
}

// BenchmarkCallRouting is what Call adds to a run, without the run: ns/op of a call
// through Call, Handle and run_skill to a Runner whose Skill and Run return at once. (A ratio
// against that Run, a nanosecond, would say nothing; BenchmarkCallOverhead has the ratio to a
// real run.)
func BenchmarkCallRouting(b *testing.B) {
	r := fakeRunner{Catalog: testCatalog{exe("word-count", "Word count", "Counts words")}}
	ctx := context.Background()
	cases := []struct {
		name, tool, args string
	}{
		{"call", "skill_word_count", `{"text":"a"}`},
		{"run_skill", toolset.ToolRunSkill, `{"skill":"word-count","args":{"text":"a"}}`},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			args := []byte(tc.args)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := toolset.Handle(ctx, r, tc.tool, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
