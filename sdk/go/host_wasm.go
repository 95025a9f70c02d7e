//go:build wasm

package skill

import pdk "github.com/extism/go-pdk"

// The host functions of skillbox/v1 (docs/abi.md §4). Every pointer is an Extism block
// offset, not an address in this module's memory.

//go:wasmimport extism:host/user skillbox_fetch
func skillboxFetch(request, body uint64) uint64

//go:wasmimport extism:host/user skillbox_env
func skillboxEnv(name uint64) uint64

//go:wasmimport extism:host/user skillbox_read_file
func skillboxReadFile(path uint64) uint64

//go:wasmimport extism:host/user skillbox_write_file
func skillboxWriteFile(path, data uint64) uint64

//go:wasmimport extism:host/user skillbox_log
func skillboxLog(level int32, message uint64)

// platformHost is the Extism kernel and the Skillbox host functions.
var platformHost host = extismHost{}

type extismHost struct{}

func (extismHost) Input() []byte   { return pdk.Input() }
func (extismHost) Output(b []byte) { pdk.Output(b) }

func (extismHost) Fetch(request, body []byte) []byte {
	req, b := block(request), block(body)
	defer release(req)
	defer release(b)
	return reply(skillboxFetch(req.Offset(), b.Offset()))
}

func (extismHost) Env(name []byte) []byte {
	n := block(name)
	defer release(n)
	return reply(skillboxEnv(n.Offset()))
}

func (extismHost) ReadFile(path []byte) []byte {
	p := block(path)
	defer release(p)
	return reply(skillboxReadFile(p.Offset()))
}

func (extismHost) WriteFile(path, data []byte) []byte {
	p, d := block(path), block(data)
	defer release(p)
	defer release(d)
	return reply(skillboxWriteFile(p.Offset(), d.Offset()))
}

func (extismHost) Log(level int32, msg []byte) {
	m := block(msg)
	defer release(m)
	skillboxLog(level, m.Offset())
}

// block copies b into a new argument block. Empty b is offset 0, the ABI's "absent",
// because the kernel cannot allocate an empty block.
func block(b []byte) *pdk.Memory {
	if len(b) == 0 {
		return &pdk.Memory{}
	}
	m := pdk.AllocateBytes(b)
	return &m
}

// release frees an argument block: the host reads arguments but never frees them.
func release(m *pdk.Memory) {
	if m.Offset() != 0 {
		m.Free()
	}
}

// reply copies a reply block out of the kernel and frees it: replies belong to the guest.
func reply(offset uint64) []byte {
	if offset == 0 {
		return nil
	}
	m := pdk.FindMemory(offset)
	b := m.ReadBytes()
	m.Free()
	return b
}
