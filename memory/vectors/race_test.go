//go:build race

package vectors

// raceEnabled says the race detector is on: the recall measurements build
// 10k-vector indexes, some tenfold slower under it, so make test runs them
// without it (test-measures) and go test -race skips them.
const raceEnabled = true
