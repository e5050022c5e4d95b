//go:build race

package toolsearch

// raceEnabled says the race detector is on: the retrieval measurements
// embed thousands of texts, some tenfold slower under it, so make test runs
// them without it (test-measures) and go test -race skips them.
const raceEnabled = true
