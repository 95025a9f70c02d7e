package interrupt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

// wazeroOpcodes reads the opcode constants of wazero's own decoder
// (internal/wasm/instruction.go in the module cache), by family: "" for one-byte opcodes and the
// three prefixes, then "Vec", "Atomic", "Misc" for the sub-opcodes of 0xFD, 0xFE, 0xFC.
func wazeroOpcodes(t *testing.T) map[string][]int {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tetratelabs/wazero").Output()
	if err != nil {
		t.Skipf("wazero's source is not at hand: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "internal", "wasm", "instruction.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Skipf("wazero's source is not at hand: %v", err)
	}
	families := map[string][]int{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.INT || !strings.HasPrefix(name.Name, "Opcode") {
					continue
				}
				v, err := strconv.ParseInt(lit.Value, 0, 64)
				if err != nil {
					t.Fatal(err)
				}
				family := ""
				for _, p := range []string{"Vec", "Atomic", "Misc"} {
					if strings.HasPrefix(name.Name, "Opcode"+p) && !strings.HasSuffix(name.Name, "Prefix") {
						family = p
					}
				}
				families[family] = append(families[family], int(v))
			}
		}
	}
	for _, v := range families {
		slices.Sort(v)
	}
	return families
}

// TestTablesMatchWazero: the opcodes Instrument decodes are the opcodes wazero v1.12 declares,
// but for those it refuses on purpose: legacy exception handling (wazero refuses it too) and
// the atomic waits (a blocked guest runs no check).
func TestTablesMatchWazero(t *testing.T) {
	w := wazeroOpcodes(t)
	var one, vec, atomics, misc []int
	for op := 0; op < 256; op++ {
		if ops[op] != immUnknown {
			one = append(one, op)
		}
		if simdImm[op] != simdUnknown {
			vec = append(vec, op)
		}
		if r := (&wasmbin.Reader{B: []byte{byte(op), 0x00, 0x00}, End: 3}); atomic(r) == nil {
			atomics = append(atomics, op)
		}
		if miscImm(uint32(op)) != miscUnknown {
			misc = append(misc, op)
		}
	}
	t.Logf("wazero declares %d one-byte, %d 0xFD, %d 0xFE, %d 0xFC opcodes", len(compact(w[""])), len(compact(w["Vec"])), len(compact(w["Atomic"])), len(compact(w["Misc"])))
	legacyEH := []int{0x06, 0x07, 0x09, 0x18, 0x19}
	wantOne := slices.DeleteFunc(slices.Clone(w[""]), func(op int) bool { return slices.Contains(legacyEH, op) })
	wantAtomic := slices.DeleteFunc(slices.Clone(w["Atomic"]), func(op int) bool { return op == atomicWait32 || op == atomicWait64 })
	for _, c := range []struct {
		what      string
		got, want []int
	}{{"one-byte", one, wantOne}, {"0xFD", vec, w["Vec"]}, {"0xFE", atomics, wantAtomic}, {"0xFC", misc, w["Misc"]}} {
		if len(c.want) == 0 {
			t.Fatalf("no %s opcodes found in wazero's source", c.what)
		}
		if !slices.Equal(c.got, compact(c.want)) {
			t.Errorf("%s opcodes:\n decoded here: %x\n in wazero:    %x", c.what, c.got, compact(c.want))
		}
	}
}

func compact(s []int) []int { return slices.Compact(slices.Clone(s)) }
