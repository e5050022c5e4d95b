//go:build !linux

package vectors

import "time"

// threadCPU is not measured here: the benchmarks report 0.
func threadCPU() time.Duration { return 0 }
