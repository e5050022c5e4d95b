//go:build !race

package agents_test

// raceEnabled says the race detector is on (see race_test.go).
const raceEnabled = false
