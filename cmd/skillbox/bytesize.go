package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag of bytes written with an optional unit: 512MiB, 2GiB, 1.5GB, 1048576.
type byteSize int64

var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

func (b *byteSize) String() string {
	if *b == 0 {
		return ""
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Set(v string) error {
	s := strings.TrimSpace(v)
	mult := 1.0
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	// !(f*mult >= 1) also refuses NaN, which compares false with everything, and sizes that
	// round to no byte at all.
	if err != nil || !(f*mult >= 1) || f*mult > 1<<62 {
		return fmt.Errorf("%q is not a size: write bytes, or a number with KiB, MiB, GiB (such as 2GiB)", v)
	}
	*b = byteSize(f * mult)
	return nil
}

// Type names the flag's value in the help.
func (b *byteSize) Type() string { return "size" }
