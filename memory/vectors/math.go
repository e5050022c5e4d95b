package vectors

import (
	"math"

	"github.com/viterin/vek/vek32"
)

// dot is the inner product of two vectors of equal length. It uses vek's
// AVX2+FMA kernel, which vek selects at run time and replaces with plain Go
// on other CPUs and architectures (no build tags involved). At 384
// dimensions on the 2-core AMD EPYC dev box it measured 22 ns per dot with
// the data in cache and 52 ns streaming 100k rows, against 160 ns and 150 ns
// for [dotGo].
func dot(a, b []float32) float32 {
	if len(a) == 0 {
		return 0 // vek panics on empty input
	}
	return vek32.Dot(a, b[:len(a)])
}

// dotGo is the portable reference kernel; tests check dot against it.
func dotGo(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	// Four accumulators let the CPU overlap the multiply-adds.
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// normalize scales v to unit length in place; the zero vector stays zero.
func normalize(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
}
