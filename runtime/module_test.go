package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// A table declared without a maximum gets one from the run's memory limit: growing it by 2^31-1
// or 32M entries fails inside the guest (-1) instead of making the host allocate 16 GiB or
// 256 MiB; growing a little still works.
func TestTableGrowIsBounded(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "tablegrow", simple("tablegrow", `"limits":{"memoryMiB":16}`), "tablegrow")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	s, _ := rt.Skill("tablegrow")
	v := s.in().Verified()
	if v.Status != catalog.StatusActive || v.Info == nil || !v.Info.Changed || v.Info.TableEntries != 16<<20/registry.TableShare/8 {
		t.Fatalf("checked: %v %v; want the table given a maximum of 1/%d of 16 MiB", v.Status, v.Err, registry.TableShare)
	}
	if v.LinearLimit != 16<<20-v.Info.TableEntries*8 {
		t.Errorf("linear limit %d: the tables' share is not reserved out of the memory limit", v.LinearLimit)
	}
	if _, err := rt.Run(context.Background(), run.Request{Skill: "tablegrow", Who: testAdmin}); err != nil {
		t.Fatal(err) // compile outside the measurement
	}
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	res, err := rt.Run(context.Background(), run.Request{Skill: "tablegrow", Who: testAdmin})
	goruntime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("run: %v (a growth did not fail as it should, or a small one failed)", err)
	}
	if !res.Success {
		t.Errorf("result %+v", res.Error)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("the host allocated %d MiB during the run: the table grew", grew>>20)
	}
}

// A table whose minimum needs more than its share of the memory limit, and modules that declare
// more than any bound allows, are broken skills: listed with the bound they cross, never compiled.
func TestModuleBoundsAtLoad(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "bigtable", simple("bigtable", `"limits":{"memoryMiB":2}`), "bigtable")
	fixture(t, dir, "bigmem", simple("bigmem", `"limits":{"memoryMiB":1}`), "fullmem")
	hostile := map[string][]byte{
		// A code section declaring 2^32-1 functions: wazero would ask the OS for hundreds of GB.
		"codebomb": append(wasmHeader(), 0x0a, 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f),
		// One function declaring 2^32-1 locals: 4 GiB in wazero's decoder.
		"localsbomb": append(wasmHeader(),
			0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
			0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
			0x0a, 0x0a, 0x01, 0x08, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b), // code: 2^32-1 i32 locals
	}
	for id, wasm := range hostile {
		sd := fixture(t, dir, id, simple(id, ""), "")
		if err := os.WriteFile(filepath.Join(sd, spec.ModuleFile), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fixture(t, dir, "manyfuncs", simple("manyfuncs", ""), "hello")
	pol := &policy.Policy{Modules: policy.ModuleLimits{MaxFunctions: 2}}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: pol})
	settled(t, rt) // found broken by the background check, before anyone runs them
	for id, want := range map[string]string{
		"bigtable":   "raise limits.memoryMiB",
		"bigmem":     "needs 2 MiB to start",
		"codebomb":   "functions",
		"localsbomb": "locals",
		"manyfuncs":  "modules.maxFunctions in the policy",
	} {
		s, err := rt.Skill(id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status() != catalog.StatusError || !strings.Contains(s.Err().Error(), want) || !strings.Contains(s.Err().Error(), spec.ModuleFile) {
			t.Errorf("%s: %v %v; want broken, naming %s and %q", id, s.Status(), s.Err(), spec.ModuleFile, want)
		}
		if _, err := rt.Run(context.Background(), run.Request{Skill: id, Who: testAdmin}); !errors.Is(err, run.ErrBroken) {
			t.Errorf("%s ran: %v", id, err)
		}
		if checked, _ := rt.CheckSkill(context.Background(), s.Dir()); checked.Status() != catalog.StatusError {
			t.Errorf("%s passes validate", id)
		}
	}
	if st := rt.Stats(); st.Compiles != 0 {
		t.Errorf("%d compilations of modules that cross a bound", st.Compiles)
	}
}

// The module's memory and the Extism kernel's share one limit: a grow bomb stops at the limit
// for both together, where it used to get the limit for each.
func TestMemoriesShareOneLimit(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "grow", simple("grow", `"limits":{"memoryMiB":4}`), "grow")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	res, err := rt.Run(context.Background(), run.Request{Skill: "grow", Who: testAdmin})
	if !errors.Is(err, run.ErrMemoryLimit) {
		t.Fatalf("grow bomb: %v", err)
	}
	if res.Usage.PeakMemoryBytes > 4<<20 {
		t.Errorf("peak %d bytes over the 4 MiB limit", res.Usage.PeakMemoryBytes)
	}
	if res.Usage.PeakMemoryBytes < 3<<20 {
		t.Errorf("peak %d bytes: the bomb stopped well short of its limit", res.Usage.PeakMemoryBytes)
	}
}

func wasmHeader() []byte { return []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00} }
