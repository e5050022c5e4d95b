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
// for a plain Go loop with four accumulators.
func dot(a, b []float32) float32 {
	if len(a) == 0 {
		return 0 // vek panics on empty input
	}
	return vek32.Dot(a, b[:len(a)])
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
