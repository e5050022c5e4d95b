package mcpwire

import "testing"

func TestRevision(t *testing.T) {
	for _, tt := range []struct {
		rev                                   Revision
		sessionless, batches, legacy, priming bool
	}{
		{"", false, true, false, false},
		{"2024-11-05", false, true, true, false},
		{"2025-03-26", false, true, true, false},
		{"2025-06-18", false, false, false, false},
		{"2025-11-25", false, false, false, true},
		{"2026-07-28", true, false, false, true},
	} {
		if got := tt.rev.Sessionless(); got != tt.sessionless {
			t.Errorf("%q.Sessionless() = %v", tt.rev, got)
		}
		if got := tt.rev.Batches(); got != tt.batches {
			t.Errorf("%q.Batches() = %v", tt.rev, got)
		}
		if got := tt.rev.Legacy(); got != tt.legacy {
			t.Errorf("%q.Legacy() = %v", tt.rev, got)
		}
		if got := tt.rev.Primes(); got != tt.priming {
			t.Errorf("%q.Primes() = %v", tt.rev, got)
		}
	}
}
