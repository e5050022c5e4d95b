//go:build race

package embed

// raceEnabled relaxes timing checks: the race detector slows code several times.
const raceEnabled = true
