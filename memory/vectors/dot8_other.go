//go:build !amd64

package vectors

// dot8 is the inner product of two quantised rows of equal length.
func dot8(a, b []int8) int32 { return dot8Go(a, b) }

func prefetchQ([]int8)    {}
func prefetchF([]float32) {}
func prefetchL([]uint32)  {}
