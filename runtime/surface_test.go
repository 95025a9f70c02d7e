package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
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

// A run's result is what every face prints and every store keeps: it is made of the run
// package's own types (and the standard library's), never of the host functions', so a change
// inside the host cannot change the API.
func TestResultHasNoHostTypes(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(tp reflect.Type, path string) {
		if seen[tp] {
			return
		}
		seen[tp] = true
		if p := tp.PkgPath(); p != "" && strings.HasPrefix(p, "github.com/skillbox-dev/skillbox/") &&
			p != "github.com/skillbox-dev/skillbox/run" && p != "github.com/skillbox-dev/skillbox/artifact" {
			t.Errorf("%s is %s, of package %s: a Result holds only run's and artifact's types", path, tp, p)
		}
		switch tp.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(tp.Elem(), path+"[]")
		case reflect.Struct:
			for i := range tp.NumField() {
				f := tp.Field(i)
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	walk(reflect.TypeFor[run.Result](), "Result")
	walk(reflect.TypeFor[run.Event](), "Event")
	if len(seen) < 5 {
		t.Fatalf("walked %d types: the walk is broken", len(seen))
	}
}
