package wasmcheck

import (
	"os"
	"testing"
)

// BenchmarkCheck measures Check of a Go guest (3.9 MB, ~41,500 data segments) against reading the
// file, the floor any gate pays: compare the ns/op of one run. "check" rewrites the table section
// (so copies the module); "walk" checks that output again, which changes nothing: the walk alone.
func BenchmarkCheck(b *testing.B) {
	const path = "../../skills/http-get/execute.wasm"
	wasm, err := os.ReadFile(path)
	if err != nil {
		b.Skip(err)
	}
	b.Run("readfile", func(b *testing.B) {
		b.SetBytes(int64(len(wasm)))
		for b.Loop() {
			if _, err := os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(wasm)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Check(wasm, Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	_, checked, err := Check(wasm, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("walk", func(b *testing.B) {
		b.SetBytes(int64(len(checked)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Check(checked, Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
