package tracing

import "testing"

// BenchmarkOff measures Off with no tracer provider installed, the price
// every call pays for skipping its spans.
func BenchmarkOff(b *testing.B) {
	if !Off() {
		b.Skip("a tracer provider is installed in this process; run with -run '^$'")
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Off()
	}
}
