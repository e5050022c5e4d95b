package quota_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/quota"
)

// failingSecond is the store's call counters, failing every add to a
// counter of the setting named "second".
type failingSecond struct {
	agentsmcp.CallCounterService
}

var errStoreDown = errors.New("store down")

func (f failingSecond) AddCallCount(ctx context.Context, key string, expiresAt time.Time, n int64) (int64, error) {
	if strings.Contains(key, "\x00second\x00") {
		return 0, errStoreDown
	}
	return f.CallCounterService.AddCallCount(ctx, key, expiresAt, n)
}

// A precharge that the store fails part way gives back what it charged:
// the caller then leaves the call to Charge, which would otherwise count
// the first limit twice.
func TestPrechargeFailingPartWayChargesNothing(t *testing.T) {
	db := openStore(t)
	window := agentsmcp.Duration(time.Hour)
	first := agentsmcp.CallLimit{CallQuota: agentsmcp.CallQuota{Limit: 1, Window: window}, Setting: "first"}
	second := agentsmcp.CallLimit{CallQuota: agentsmcp.CallQuota{Limit: 5, Window: window}, Setting: "second"}
	limits := []agentsmcp.CallLimit{first, second}
	calls := &quota.Calls{Counters: failingSecond{db}}
	if _, err := calls.Precharge(t.Context(), "key:a", limits, "up", "up__tool"); !errors.Is(err, errStoreDown) {
		t.Fatalf("Precharge = %v, want the store's error", err)
	}
	// The first limit allows one call: it must still be free.
	healthy := &quota.Calls{Counters: db}
	if err := healthy.Exceeded(t.Context(), "key:a", []agentsmcp.CallLimit{first}, "up", "up__tool"); err != nil {
		t.Fatalf("after a failed precharge the first limit is used up: %v", err)
	}
	if err := healthy.Charge(t.Context(), "key:a", []agentsmcp.CallLimit{first}, "up", "up__tool"); err != nil {
		t.Fatalf("the one call the first limit allows was refused: %v", err)
	}
}
