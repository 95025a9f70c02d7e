//go:build unix && !linux

package runtime

// mapNoReserve is Linux's; elsewhere anonymous mappings are reserved lazily anyway.
const mapNoReserve = 0
