// Package wazevoframes reads, from wazero's compilation cache, how many bytes of wazero's call
// stack each function of a compiled module takes: the size its compiler (wazevo) checks at the
// function's entry before it grows the stack.
//
// That size is what the stack count interrupt.Instrument inserts must charge a call for its
// bound to hold. It is only known once a module is compiled, and only from the machine code:
// wazero exports nothing about frames. This package decodes the one place it is written, the
// stack check at the top of each function on amd64:
//
//	push %rbp ; mov %rsp, %rbp ; sub $requiredStackSize, %rsp ; cmp <stack bottom>, %rsp ...
//
// (wazevo backend/isa/amd64, setupPrologue and insertStackBoundsCheck), from the cache entry
// wazero v1.12 writes (wazevo's serializeCompiledModule: "WAZEVO", its version, the function
// offsets, the code). It is used to make and to check the frame tables of the interpreters
// Skillbox ships; a module or a wazero it does not read exactly is an error, never a guess.
package wazevoframes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// ErrUnknown means the cache entry or a function's code is not laid out as this package reads
// it: another wazero version, another architecture, or a function wazevo compiled without a
// stack check.
var ErrUnknown = errors.New("wazevoframes: not wazevo's amd64 code as this package reads it")

var magic = []byte("WAZEVO")

// Read returns the stack size of each function defined in the module whose cache entry is
// entry, in the order of its code section.
func Read(entry []byte) ([]uint32, error) {
	if runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("%w: this is %s", ErrUnknown, runtime.GOARCH)
	}
	if !bytes.HasPrefix(entry, magic) || len(entry) < len(magic)+1 {
		return nil, fmt.Errorf("%w: no WAZEVO header", ErrUnknown)
	}
	p := len(magic)
	p += 1 + int(entry[p]) // the wazero version
	if p+4 > len(entry) {
		return nil, fmt.Errorf("%w: short header", ErrUnknown)
	}
	n := int(binary.LittleEndian.Uint32(entry[p:]))
	p += 4
	if n > (len(entry)-p)/8 {
		return nil, fmt.Errorf("%w: %d functions in %d bytes", ErrUnknown, n, len(entry))
	}
	offsets := make([]uint64, n)
	for i := range offsets {
		offsets[i] = binary.LittleEndian.Uint64(entry[p:])
		p += 8
	}
	if p+8 > len(entry) {
		return nil, fmt.Errorf("%w: no code length", ErrUnknown)
	}
	codeLen := binary.LittleEndian.Uint64(entry[p:])
	p += 8
	if codeLen > uint64(len(entry)-p) {
		return nil, fmt.Errorf("%w: code of %d bytes in %d", ErrUnknown, codeLen, len(entry)-p)
	}
	code := entry[p : p+int(codeLen)]
	frames := make([]uint32, n)
	for i, off := range offsets {
		if off >= uint64(len(code)) {
			return nil, fmt.Errorf("%w: function %d at %d, past the code", ErrUnknown, i, off)
		}
		size, err := required(code[off:])
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		frames[i] = size
	}
	return frames, nil
}

// required decodes the start of one function: push %rbp (55), mov %rsp,%rbp (48 89 e5), then
// sub $imm,%rsp as 48 83 ec imm8 or 48 81 ec imm32, the immediate being requiredStackSize.
func required(fn []byte) (uint32, error) {
	prologue := []byte{0x55, 0x48, 0x89, 0xe5}
	if !bytes.HasPrefix(fn, prologue) {
		return 0, fmt.Errorf("%w: no frame set-up at the entry", ErrUnknown)
	}
	fn = fn[len(prologue):]
	switch {
	case len(fn) >= 4 && bytes.HasPrefix(fn, []byte{0x48, 0x83, 0xec}):
		return uint32(fn[3]), nil // a sign-extended imm8; wazevo's sizes are positive
	case len(fn) >= 7 && bytes.HasPrefix(fn, []byte{0x48, 0x81, 0xec}):
		v := int32(binary.LittleEndian.Uint32(fn[3:]))
		if v < 0 {
			return 0, fmt.Errorf("%w: a negative stack size", ErrUnknown)
		}
		return uint32(v), nil
	}
	return 0, fmt.Errorf("%w: no stack check after the frame set-up", ErrUnknown)
}

// ReadDir reads the one cache entry in dir, a wazero compilation cache directory that one module
// was compiled into (host modules are not cached).
func ReadDir(dir string) ([]uint32, error) {
	_, frames, err := readEntry(dir)
	return frames, err
}

// readEntry finds the one cache entry in dir, and reads its frames.
func readEntry(dir string) (string, []uint32, error) {
	path, err := entryPath(dir)
	if err != nil {
		return "", nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	frames, err := Read(b)
	return path, frames, err
}

// entryPath finds the one cache entry in dir.
func entryPath(dir string) (string, error) {
	var entries []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && filepath.Ext(path) != ".tmp" {
			entries = append(entries, path)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if len(entries) != 1 {
		return "", fmt.Errorf("wazevoframes: %d cache entries in %s, want 1", len(entries), dir)
	}
	return entries[0], nil
}
