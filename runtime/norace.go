//go:build !race

package runtime

// raceSlowdown is 1 in a binary built without -race (see race.go).
const raceSlowdown = 1
