package quota

import (
	"context"
	"path"
	"strconv"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Calls enforces call quotas with counters in a store shared by every
// replica ([agentsmcp.CallCounterService]): windows are fixed (see
// windowEnd), so that every replica agrees when one ends without talking
// to the others.
type Calls struct {
	Counters agentsmcp.CallCounterService
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

func (c *Calls) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

var _ agentsmcp.CallQuotaEnforcer = (*Calls)(nil)

// Charge counts one call of tool name (served by provider upstream) by
// principal against each limit that selects it, and refuses it with a
// [*agentsmcp.CallQuotaError] when that takes one past its Limit; the
// error of the store otherwise. A refused call stays counted against the
// limits charged before the one that refused it, so that a caller who
// keeps calling past a quota cannot use the others up faster than the
// calls it makes.
func (c *Calls) Charge(ctx context.Context, principal string, limits []agentsmcp.CallLimit, upstream, name string) error {
	return c.count(ctx, principal, limits, upstream, name, 1)
}

// Exceeded reports, without counting, whether the next call of tool name
// by principal would be refused by Charge: a [*agentsmcp.CallQuotaError],
// nil, or the store's error. The HTTP transports ask it before the call
// reaches a session, to answer 429; Charge, which runs with the call,
// decides.
func (c *Calls) Exceeded(ctx context.Context, principal string, limits []agentsmcp.CallLimit, upstream, name string) error {
	return c.count(ctx, principal, limits, upstream, name, 0)
}

// Precharge counts one call as Charge does and, when it is not refused,
// returns the refund of that count: one add of -1 to each counter it
// charged (those of the window the charge fell in). A refused call is not
// refunded, as Charge's refusals stay counted. When the store fails part
// way, the counters already charged are given back before the error is
// returned: the caller then leaves the call to Charge, which must not
// find them counted twice.
func (c *Calls) Precharge(ctx context.Context, principal string, limits []agentsmcp.CallLimit, upstream, name string) (func(context.Context) error, error) {
	now := c.now()
	refundFirst := func(ctx context.Context, charged int) error {
		for _, l := range limits[:charged] {
			if !selects(l.CallQuota, upstream, name) {
				continue
			}
			end := windowEnd(l.CallQuota, now)
			if _, err := c.Counters.AddCallCount(ctx, counterKey(principal, l, end), end, -1); err != nil {
				return err
			}
		}
		return nil
	}
	for i, l := range limits {
		if !selects(l.CallQuota, upstream, name) {
			continue
		}
		end := windowEnd(l.CallQuota, now)
		count, err := c.Counters.AddCallCount(ctx, counterKey(principal, l, end), end, 1)
		if err != nil {
			_ = refundFirst(ctx, i) // best effort: the store just failed
			return nil, err
		}
		if count > l.Limit {
			return nil, &agentsmcp.CallQuotaError{Principal: agentsmcp.MemoryOwner(principal), Quota: l.CallQuota, Setting: l.Setting, RetryAfter: end.Sub(now)}
		}
	}
	return func(ctx context.Context) error { return refundFirst(ctx, len(limits)) }, nil
}

func (c *Calls) count(ctx context.Context, principal string, limits []agentsmcp.CallLimit, upstream, name string, n int64) error {
	now := c.now()
	for _, l := range limits {
		if !selects(l.CallQuota, upstream, name) {
			continue
		}
		end := windowEnd(l.CallQuota, now)
		count, err := c.Counters.AddCallCount(ctx, counterKey(principal, l, end), end, n)
		if err != nil {
			return err
		}
		// Charge has counted this call: past the limit is over it. Exceeded
		// has not: at the limit, the next call would be over it.
		if count+1-n > l.Limit {
			return &agentsmcp.CallQuotaError{Principal: agentsmcp.MemoryOwner(principal), Quota: l.CallQuota, Setting: l.Setting, RetryAfter: end.Sub(now)}
		}
	}
	return nil
}

// counterKey names the counter of principal for l in the window that ends
// at end. The parts are joined with NUL, which none of them holds.
func counterKey(principal string, l agentsmcp.CallLimit, end time.Time) string {
	return strings.Join([]string{
		agentsmcp.MemoryOwner(principal), l.Setting, l.Upstream, l.Tool,
		strconv.FormatInt(int64(time.Duration(l.Window)/time.Millisecond), 10),
		strconv.FormatInt(end.UnixMilli(), 10),
	}, "\x00")
}

// selects reports whether q counts a call of tool name (the registry name,
// "<upstream>__<tool>" or a local tool's) served by provider upstream.
func selects(q agentsmcp.CallQuota, upstream, name string) bool {
	if q.Upstream != "" && q.Upstream != upstream {
		return false
	}
	if q.Tool == "" {
		return true
	}
	local := strings.TrimPrefix(name, upstream+agentsmcp.NamespaceSeparator)
	ok, _ := path.Match(q.Tool, local)
	return ok
}

// windowEnd is the end of the window of q that holds now: windows start
// at multiples of q.Window since the Unix epoch, so that every replica
// agrees where one ends.
func windowEnd(q agentsmcp.CallQuota, now time.Time) time.Time {
	w := time.Duration(q.Window)
	return now.Truncate(w).Add(w)
}
