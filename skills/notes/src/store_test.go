package main

import (
	"strings"
	"testing"
)

func TestAddName(t *testing.T) {
	names := []string{}
	for _, n := range []string{"todo", "ideas", "todo", "a.b", "zz", "ideas"} {
		names, _ = addName(names, n)
	}
	if got := strings.Join(names, ","); got != "a.b,ideas,todo,zz" {
		t.Fatalf("got %s", got)
	}
	if _, changed := addName(names, "todo"); changed {
		t.Fatal("existing name reported as new")
	}
}

func TestAppendLine(t *testing.T) {
	tests := [][3]string{
		{"", "x", "x"},
		{"a", "x", "a\nx"},
		{"a\n", "x", "a\nx"},
	}
	for _, tc := range tests {
		if got := appendLine(tc[0], tc[1]); got != tc[2] {
			t.Errorf("appendLine(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestNameRE(t *testing.T) {
	for _, ok := range []string{"todo", "a.b_c-1", strings.Repeat("x", 64), ".."} {
		if !nameRE.MatchString(ok) {
			t.Errorf("%q rejected", ok)
		}
	}
	for _, bad := range []string{"", "a/b", "a b", strings.Repeat("x", 65), "ü"} {
		if nameRE.MatchString(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
