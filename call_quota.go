package agentsmcp

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// CallQuota admits at most Limit calls per Window by one principal, counted
// together, of the tools of provider Upstream ("" is any) whose name within
// it matches the path.Match pattern Tool ("" is any). Invariants:
// internal/validate.CallQuota.
type CallQuota struct {
	Upstream string `json:"upstream,omitempty" yaml:"upstream"`
	Tool     string `json:"tool,omitempty" yaml:"tool"`
	Limit    int64  `json:"limit" yaml:"limit"`
	// Window ("1m", "24h"): windows start at multiples of it since the Unix epoch.
	Window Duration `json:"window" yaml:"window"`
}

// Bounds of CallQuota.Window.
const (
	MinCallQuotaWindow = time.Second
	MaxCallQuotaWindow = 31 * 24 * time.Hour
	// MaxCallQuotas bounds the quotas of one key or one virtual server.
	MaxCallQuotas = 64
)

// String describes q in refusals and logs: "10 calls per 1m0s of github__create_*".
func (q CallQuota) String() string {
	what := "any tool"
	switch {
	case q.Upstream != "" && q.Tool != "":
		what = q.Upstream + NamespaceSeparator + q.Tool
	case q.Upstream != "":
		what = "upstream " + q.Upstream
	case q.Tool != "":
		what = "tools " + q.Tool
	}
	return fmt.Sprintf("%d calls per %s of %s", q.Limit, time.Duration(q.Window), what)
}

// CallLimit is a [CallQuota] with where it is configured, which keeps the
// counters of two configurations apart (a key's and a virtual server's
// quota of the same tools count separately) and is named in refusals.
type CallLimit struct {
	CallQuota
	// Setting names the configuration:
	// "auth.api_keys[name=ci].call_quotas",
	// "virtual_servers[name=crm].call_quotas".
	Setting string
}

// CallQuotaEnforcer charges tool calls against call limits (memory/quota
// implements it over a [CallCounterService]).
type CallQuotaEnforcer interface {
	// Charge counts one call of tool name (the registry name) served by
	// provider upstream by principal against each limit that selects it,
	// and refuses it with a [*CallQuotaError] when that takes one past
	// its Limit.
	Charge(ctx context.Context, principal string, limits []CallLimit, upstream, name string) error
	// Exceeded reports, without counting, the [*CallQuotaError] that
	// Charge would return for the next such call, or nil.
	Exceeded(ctx context.Context, principal string, limits []CallLimit, upstream, name string) error
	// Precharge is Charge for a call charged ahead of the step that runs
	// it (the HTTP guard, which answers a refusal 429): when it is not
	// refused, refund gives the count back, for a call that never got to
	// run. Store errors are returned as by Charge.
	Precharge(ctx context.Context, principal string, limits []CallLimit, upstream, name string) (refund func(context.Context) error, err error)
}

// CallQuotaError refuses a call past a [CallQuota] in the current window.
// Not an [*Error]: transports answer it as a rate limit (HTTP 429,
// Retry-After), not as EQUOTA.
type CallQuotaError struct {
	Principal  string
	Quota      CallQuota
	Setting    string // where the quota is configured: "auth.api_keys[name=ci].call_quotas", "virtual_servers[name=x].call_quotas"
	RetryAfter time.Duration
}

func (e *CallQuotaError) Error() string {
	return fmt.Sprintf("call quota exceeded: principal %q has used its quota of %s (%s); retry after %s",
		e.Principal, e.Quota, e.Setting, e.RetryAfter.Round(time.Millisecond))
}

// CallCounterService keeps the call counters of [CallQuota]s, shared by
// every replica. A counter lives until expiresAt; after it, it may read 0
// or its last count.
type CallCounterService interface {
	// AddCallCount adds n to counter key, creating it at 0 first if it
	// does not exist, and returns its new value: 0 reads it, a negative n
	// gives back calls counted before (a refund). Concurrent adds, from
	// this process or other replicas, are never lost.
	AddCallCount(ctx context.Context, key string, expiresAt time.Time, n int64) (int64, error)
}

// Duration is a time.Duration that is written in JSON and YAML as a Go
// duration string ("1m30s"), and read from one.
type Duration time.Duration

// MarshalText writes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("invalid duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}
