package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The cgroup files that hold the container's memory limit: v2 (unified), then v1.
const (
	cgroupV2MemoryMax = "/sys/fs/cgroup/memory.max"
	cgroupV1MemoryMax = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
)

// memoryLimitShare is the part of the container's memory limit given to the Go
// runtime as its soft limit: the rest is left for what the runtime does not
// count (thread stacks outside the heap, SQLite's page cache, cgo) so that the
// collector works harder before the kernel kills the process.
const memoryLimitShare = 0.9

// noCgroupLimit is what cgroup v1 reports for "no limit" (the largest page
// multiple of an int64) or more: a value this large is treated as no limit.
const noCgroupLimit = math.MaxInt64 / 2

// setMemoryLimitFromCgroup sets the Go runtime's soft memory limit to
// memoryLimitShare of the container's memory limit, read from the first of
// files that exists, unless GOMEMLIMIT is set (the runtime has then applied
// it) or there is no limit. It returns the limit set, 0 when none was.
func setMemoryLimitFromCgroup(getenv func(string) string, files ...string) (int64, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		limit, ok, err := parseCgroupMemoryLimit(string(data))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		if !ok {
			return 0, nil
		}
		soft := int64(float64(limit) * memoryLimitShare)
		debug.SetMemoryLimit(soft)
		return soft, nil
	}
	return 0, nil
}

// parseCgroupMemoryLimit reads a cgroup memory limit file: a byte count, or
// "max" (v2) or a huge number (v1) for no limit, reported as ok false.
func parseCgroupMemoryLimit(s string) (limit int64, ok bool, err error) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false, fmt.Errorf("not a memory limit: %q", s)
	}
	if n >= noCgroupLimit {
		return 0, false, nil
	}
	return n, true, nil
}
