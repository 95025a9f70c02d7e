package main

import "testing"

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "512MiB": 512 << 20, "2GiB": 2 << 30, "1.5GiB": 3 << 29, "2 GB": 2e9, "64K": 64 << 10} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, int64(b), err, want)
		}
	}
	for _, in := range []string{"", "0", "-1GiB", "lots", "1XiB", "1e30GiB", "NaN"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, int64(b))
		}
	}
}

// FuzzByteSize: a size flag is refused, or is a positive size that fits an int64.
func FuzzByteSize(f *testing.F) {
	for _, s := range []string{"2GiB", "1.5", "0x10", "9999999999999TiB", "+3MB", " 7 K "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b byteSize
		if err := b.Set(s); err == nil && b <= 0 {
			t.Fatalf("Set(%q) = %d", s, int64(b))
		}
	})
}
