package wazevoframes

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// entry builds a cache entry as wazevo writes one, with these functions' code.
func entry(fns ...[]byte) []byte {
	b := append([]byte("WAZEVO"), 4)
	b = append(b, "v1.x"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(fns)))
	var code []byte
	for _, f := range fns {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(code)))
		code = append(code, f...)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(code)))
	return append(b, code...)
}

func TestReadDecodesTheStackCheck(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 code")
	}
	imm8 := []byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x40, 0x90}
	imm32 := []byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec, 0x70, 0x1c, 0x00, 0x00, 0x90}
	frames, err := Read(entry(imm8, imm32))
	if err != nil || len(frames) != 2 || frames[0] != 0x40 || frames[1] != 0x1c70 {
		t.Fatalf("Read = %v, %v; want [64 7280]", frames, err)
	}
	for name, bad := range map[string][]byte{
		"no header":        []byte("WAZERO"),
		"no frame set-up":  entry([]byte{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}),
		"no stack check":   entry([]byte{0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90}),
		"negative size":    entry([]byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec, 0xff, 0xff, 0xff, 0xff}),
		"offsets past end": entry(imm8)[:20],
	} {
		if _, err := Read(bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("%s: %v, want ErrUnknown", name, err)
		}
	}
}

// TestMeasureAWasmModule reads real frames: a function that keeps more values across its call
// takes more stack.
func TestMeasureAWasmModule(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 code")
	}
	wasm, err := os.ReadFile("../interrupt/testdata/stack.wasm")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := Measure(context.Background(), wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2|experimental.CoreFeaturesTailCall), wasm)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 7 {
		t.Fatalf("%d frames, want 7 (the module's functions)", len(frames))
	}
	for i, f := range frames {
		if f == 0 || f > 4096 {
			t.Errorf("function %d: a frame of %d bytes", i, f)
		}
	}
}

func TestTablesAreForOneModule(t *testing.T) {
	table := Encode([]byte("module a"), []uint32{1, 2, 3})
	if frames, err := Decode(table, []byte("module a")); err != nil || len(frames) != 3 || frames[2] != 3 {
		t.Fatalf("Decode = %v, %v", frames, err)
	}
	if _, err := Decode(table, []byte("module b")); !errors.Is(err, ErrStale) {
		t.Fatalf("another module's table: %v, want ErrStale", err)
	}
	if _, err := Decode(table[:40], []byte("module a")); err == nil {
		t.Fatal("a cut table decoded")
	}
}
