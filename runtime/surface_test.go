package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// maxExported bounds the runtime's exported surface: every exported package-level const, var,
// type and func (not methods, not fields). What describes a skill, a policy, a version or a run
// lives in the leaf packages; the runtime keeps the Runtime and what runs with it. A new name
// here is a question first: does it belong in a leaf, or under internal/?
const maxExported = 80

func TestRuntimeSurfaceIsBounded(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			f, err := parser.ParseFile(fset, n, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	var names []string
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("found no exported names: the test reads the wrong directory")
	}
	if len(names) > maxExported {
		slices.Sort(names)
		t.Errorf("runtime exports %d package-level names, more than %d: %s", len(names), maxExported, strings.Join(names, " "))
	}
}
