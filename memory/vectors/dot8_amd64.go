package vectors

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// dot8AVX2 is the AVX2 kernel of dot8 (dot8_amd64.s); n must be a positive
// multiple of 32.
//
//go:noescape
func dot8AVX2(a, b *int8, n int) int32

var hasAVX2 = cpu.X86.HasAVX2

// dot8 is the inner product of two quantised rows of equal length, a
// multiple of quantStride's 32. Any other length takes the Go loop: the
// kernel would read past the rows.
func dot8(a, b []int8) int32 {
	if hasAVX2 && len(a) > 0 && len(a)%32 == 0 {
		_ = b[len(a)-1]
		return dot8AVX2(&a[0], &b[0], len(a))
	}
	return dot8Go(a, b)
}

// prefetch asks for the cache lines of the n > 0 bytes at p without
// waiting, so that the random row reads of a beam search overlap instead
// of stalling one after the other.
//
//go:noescape
func prefetch(p unsafe.Pointer, n int)

// prefetchQ prefetches a quantised row.
func prefetchQ(row []int8) { prefetch(unsafe.Pointer(&row[0]), len(row)) }

// prefetchF prefetches a float32 row.
func prefetchF(row []float32) { prefetch(unsafe.Pointer(&row[0]), 4*len(row)) }

// prefetchL prefetches a neighbour row.
func prefetchL(row []uint32) { prefetch(unsafe.Pointer(&row[0]), 4*len(row)) }
