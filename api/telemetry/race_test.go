//go:build race

package telemetry

// raceDetector: the race detector's instrumentation allocates now and
// then on its own, so counts of allocations are not checked under it.
const raceDetector = true
