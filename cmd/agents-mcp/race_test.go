//go:build race

package main

// raceEnabled says the race detector is on: it slows the learning benchmark
// some tenfold, so make test runs that benchmark without it (bench-learning).
const raceEnabled = true
