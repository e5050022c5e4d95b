package vectors

import (
	"math/rand/v2"
	"testing"
)

// TestDot8 checks the kernel against the portable loop on random rows,
// including the extreme values ±127 at every position, and checks that
// quantised similarities stay close to exact ones.
func TestDot8(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{32, 64, 384, 1024} {
		a, b := make([]int8, n), make([]int8, n)
		for trial := range 50 {
			for i := range a {
				a[i], b[i] = int8(r.IntN(255)-127), int8(r.IntN(255)-127)
				if trial == 0 {
					a[i], b[i] = 127, -127
				}
			}
			if got, want := dot8(a, b), dot8Go(a, b); got != want {
				t.Fatalf("n=%d trial %d: dot8 = %d, want %d", n, trial, got, want)
			}
		}
	}
	const dims = 300
	x, y := make([]float32, dims), make([]float32, dims)
	qx, qy := make([]int8, quantStride(dims)), make([]int8, quantStride(dims))
	for range 100 {
		for i := range x {
			x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())+x[i]
		}
		normalize(x)
		normalize(y)
		approx := quantize(x, qx) * quantize(y, qy) * float32(dot8(qx, qy))
		if exact := dot(x, y); approx < exact-0.01 || approx > exact+0.01 {
			t.Fatalf("quantised similarity %.4f, exact %.4f", approx, exact)
		}
	}
}
