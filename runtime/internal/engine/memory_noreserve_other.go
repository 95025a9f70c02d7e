//go:build unix && !linux

package engine

// mapNoReserve is Linux's; elsewhere anonymous mappings are reserved lazily anyway.
const mapNoReserve = 0
