package run_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
)

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
