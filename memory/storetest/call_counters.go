package storetest

import (
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The tests of agentsmcp.CallCounterService: what the call quotas, shared
// by replicas, rely on.

func init() {
	suite["CallCounters/AddCountsPerKey"] = testCallCountersPerKey
	suite["CallCounters/ConcurrentAddsAreNotLost"] = testCallCountersConcurrent
}

func callCounters(t *testing.T, s Services) agentsmcp.CallCounterService {
	t.Helper()
	if s.CallCounters == nil {
		t.Skip("the store keeps no call counters")
	}
	return s.CallCounters
}

func testCallCountersPerKey(t *testing.T, s Services) {
	c := callCounters(t, s)
	ctx := t.Context()
	end := time.Now().Add(time.Minute)
	for i, want := range []int64{1, 2, 3} {
		got, err := c.AddCallCount(ctx, "alice|q0|w1", end, 1)
		if err != nil || got != want {
			t.Fatalf("add %d to alice = %d, %v; want %d", i, got, err, want)
		}
	}
	// Another key (another principal, another window) starts at zero.
	if got, err := c.AddCallCount(ctx, "bob|q0|w1", end, 1); err != nil || got != 1 {
		t.Fatalf("first add to bob = %d, %v; want 1", got, err)
	}
	if got, err := c.AddCallCount(ctx, "alice|q0|w2", end, 1); err != nil || got != 1 {
		t.Fatalf("first add to alice's next window = %d, %v; want 1", got, err)
	}
	// Adding 0 reads the count; a negative add gives calls back.
	if got, err := c.AddCallCount(ctx, "alice|q0|w1", end, 0); err != nil || got != 3 {
		t.Fatalf("add 0 to alice = %d, %v; want 3", got, err)
	}
	if got, err := c.AddCallCount(ctx, "never|added", end, 0); err != nil || got != 0 {
		t.Fatalf("add 0 to a new key = %d, %v; want 0", got, err)
	}
	if got, err := c.AddCallCount(ctx, "alice|q0|w1", end, -1); err != nil || got != 2 {
		t.Fatalf("add -1 to alice = %d, %v; want 2", got, err)
	}
	if got, err := c.AddCallCount(ctx, "alice|q0|w1", end, 1); err != nil || got != 3 {
		t.Fatalf("add 1 to alice after the refund = %d, %v; want 3", got, err)
	}
	// Many adds with expired counters around still count right (the
	// sweep of expired counters runs among them).
	past := time.Now().Add(-time.Hour)
	for i := range 150 {
		if _, err := c.AddCallCount(ctx, "old|"+string(rune('a'+i%26)), past, 1); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := c.AddCallCount(ctx, "alice|q0|w1", end, 1); err != nil || got != 4 {
		t.Fatalf("add to alice after the sweep = %d, %v; want 4", got, err)
	}
}

func testCallCountersConcurrent(t *testing.T, s Services) {
	c := callCounters(t, s)
	ctx := t.Context()
	end := time.Now().Add(time.Minute)
	const workers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				if _, err := c.AddCallCount(ctx, "shared", end, 1); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, err := c.AddCallCount(ctx, "shared", end, 0); err != nil || got != workers*each {
		t.Fatalf("count after %d concurrent adds = %d, %v", workers*each, got, err)
	}
}
