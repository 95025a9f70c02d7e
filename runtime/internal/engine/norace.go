//go:build !race

package engine

// RaceSlowdown is 1 in a binary built without -race (see race.go).
const RaceSlowdown = 1
