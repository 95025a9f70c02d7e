// Package hostcall is the boundary between package skill and whatever answers its host
// calls: the Skillbox host in a WebAssembly build, a scripted fake (package skillboxtest)
// in a native test. It is internal so that the byte-level ABI it speaks is not part of
// the SDK's public API: skill authors see *skill.Context, never a Host.
package hostcall

// Host is the whole boundary to the Skillbox host: raw bytes in, raw reply blocks out
// (a status byte, then the payload; docs/abi.md §3). Everything above it (framing,
// statuses, errors) is plain Go shared by every Host.
type Host interface {
	Input() []byte
	Output(b []byte)
	Fetch(request, body []byte) []byte
	Env(name []byte) []byte
	ReadFile(path []byte) []byte
	WriteFile(path, data []byte) []byte
	Log(level int32, msg []byte)
}

// NewContext returns a *skill.Context whose calls go to h, as an any because this
// package cannot import skill. Package skill sets it in native builds only, so a
// WebAssembly skill carries neither the hook nor a way to swap its host; it is nil there.
var NewContext func(h Host) any
