package main

import "syscall"

// processCPU is the CPU time this process has used, in nanoseconds: user
// plus system, all threads. Waiting for a core on a loaded machine does not
// add to it, so it is a fairer latency measure than wall time there.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
