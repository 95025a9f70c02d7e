package catalog_test

import (
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
)

// skill is a catalog.Skill whose methods no test calls.
type skill struct{ catalog.Skill }

// A reader of a catalog skips what is not a skill: nil, and a nil pointer in the interface.
func TestPresent(t *testing.T) {
	var none *skill
	for _, tc := range []struct {
		name string
		s    catalog.Skill
		want bool
	}{
		{"nil", nil, false},
		{"a nil pointer", none, false},
		{"a pointer", &skill{}, true},
		{"a value", skill{}, true},
	} {
		if got := catalog.Present(tc.s); got != tc.want {
			t.Errorf("%s: Present = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An active skill and an unchecked one (whose run checks it first) may be offered and run; a
// broken one, or a status that is none of these, may not.
func TestStatusUsable(t *testing.T) {
	for st, want := range map[catalog.Status]bool{
		catalog.StatusActive: true, catalog.StatusUnchecked: true, catalog.StatusError: false, "": false, "disabled": false,
	} {
		if st.Usable() != want {
			t.Errorf("%q.Usable() = %v, want %v", st, !want, want)
		}
	}
}
