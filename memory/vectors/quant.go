package vectors

import "math"

// Quantised rows. Beam searches spend most of their time reading rows of
// nodes they have never touched, at random: at 100k × 384 float32 rows
// (150 MB) nearly every read misses the caches. So the graph also keeps
// each row as int8 (a quarter of the bytes: 38 MB, about the size of the
// L3 cache of the dev box), scaled per row so that its largest coordinate
// maps to ±127, and walks the graph on those. The final beam is then
// re-scored with the float32 rows, so returned scores are exact and only
// the choice of which nodes enter the beam sees the rounding.

// quantStride is the length of a quantised row: dims rounded up to a
// multiple of 32, the kernel's step; the padding is zero.
func quantStride(dims int) int { return (dims + 31) &^ 31 }

// quantize writes v, scaled so that its largest magnitude is 127, into
// out (len quantStride, padding zeroed) and returns the scale that maps it
// back: v[i] ≈ scale·out[i].
func quantize(v []float32, out []int8) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	clear(out)
	if m == 0 {
		return 0
	}
	inv := 127 / m
	for i, x := range v {
		out[i] = int8(math.Round(float64(x * inv)))
	}
	return m / 127
}

// dot8Go is the portable dot8, with four accumulators.
func dot8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}
