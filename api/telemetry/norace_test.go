//go:build !race

package telemetry

// raceDetector: see race_test.go.
const raceDetector = false
