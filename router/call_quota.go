package router

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router/transport/mcphttp"
)

// This file is the call quotas per principal × upstream × tool
// ([agentsmcp.CallQuota]): every tool call is charged, before its
// provider runs, against the quotas of its caller's key and of the
// virtual server it came through ([Options.CallQuotas] keeps the counters,
// in the store that the replicas share). A refusal is a rate limit:
// JSON-RPC [CodeRateLimited] with {"retryAfterMs", "quota", "setting"} in
// its data on every MCP transport, and, on the HTTP ones, HTTP 429 with
// Retry-After when the quota was already used up before the request
// arrived ([Router.callQuotaRefusal]).

// callLimits are the call limits of a call made by p in ctx: p's own and
// those of the virtual server ctx was served through.
func callLimits(ctx context.Context, p *agentsmcp.Principal) []agentsmcp.CallLimit {
	var limits []agentsmcp.CallLimit
	if p != nil {
		limits = p.CallLimits
	}
	if vs, ok := VirtualServerFrom(ctx); ok && len(vs.CallQuotas) > 0 {
		limits = append(limits[:len(limits):len(limits)], virtualServerCallLimits(vs)...)
	}
	return limits
}

// chargeCall charges a call of e, made by req, against the call limits
// of its caller, unless the HTTP guard charged it already
// (call_precharge.go). The call tool of discovery mode is not charged:
// the call it dispatches again is, under the real tool's name.
func (r *Router) chargeCall(ctx context.Context, e *toolEntry, req *mcp.CallToolRequest) error {
	if r.callQuotas == nil || e.tool.Name == CallToolName {
		return nil
	}
	if req != nil && r.takePrecharge(req, agentsmcp.PrincipalIDFrom(ctx), e.tool.Name) {
		return nil
	}
	p := agentsmcp.PrincipalFrom(ctx)
	limits := callLimits(ctx, p)
	if len(limits) == 0 {
		return nil
	}
	err := r.callQuotas.Charge(ctx, agentsmcp.PrincipalIDFrom(ctx), limits, e.provider.Name(), e.tool.Name)
	if err != nil {
		r.recordRefusal(ctx, e.tool.Name, nil, "call quota exceeded")
	}
	return err
}

func isCallQuotaError(err error) bool {
	_, ok := errors.AsType[*agentsmcp.CallQuotaError](err)
	return ok
}

// callQuotaExceeded is the JSON-RPC error of a call refused by a call
// quota: the rate-limit code, since waiting for the window to end helps.
func callQuotaExceeded(e *agentsmcp.CallQuotaError) *jsonrpc.Error {
	data, _ := json.Marshal(struct {
		RetryAfterMs int64  `json:"retryAfterMs"`
		Quota        string `json:"quota"`
		Setting      string `json:"setting"`
	}{retryAfterMs(e.RetryAfter), e.Quota.String(), e.Setting})
	return &jsonrpc.Error{Code: CodeRateLimited, Message: e.Error(), Data: data}
}

func retryAfterMs(d time.Duration) int64 {
	return int64(math.Ceil(float64(d) / float64(time.Millisecond)))
}

// callQuotaRefusal is [mcphttp.Options.RefuseCall]: whether a tools/call
// of the exposed tool name, in req (authenticated; to the virtual server
// its [mcphttp.VirtualServerHeader] names, if any), is refused by a call
// quota already used up. It charges the call, in the one round trip to
// the counters that the call then does not make (call_precharge.go).
// Unknown tools, and failures of the counters, are left to the call.
func (r *Router) callQuotaRefusal(req *http.Request, name string) (*jsonrpc.Error, time.Duration, bool) {
	req.Header.Del(prechargedHeader)
	ctx := req.Context()
	p := agentsmcp.PrincipalFrom(ctx)
	if p == nil {
		p = r.access.Default
	}
	if vsName := req.Header.Get(mcphttp.VirtualServerHeader); vsName != "" {
		vs, ok := r.VirtualServer(vsName)
		if !ok {
			return nil, 0, false
		}
		view, _ := r.VirtualView(vsName)
		real, ok := view.RealName(name)
		if !ok {
			return nil, 0, false
		}
		name = real
		ctx = WithVirtualServer(ctx, vs)
	}
	limits := callLimits(ctx, p)
	if len(limits) == 0 {
		return nil, 0, false
	}
	e, ok := r.entry(name)
	if !ok || e.tool.Name == CallToolName {
		return nil, 0, false
	}
	id := ""
	if p != nil {
		id = p.ID
	}
	qe, ok := errors.AsType[*agentsmcp.CallQuotaError](r.precharge(ctx, req, id, limits, e.provider.Name(), e.tool.Name))
	if !ok {
		return nil, 0, false
	}
	return callQuotaExceeded(qe), qe.RetryAfter, true
}

// virtualServerCallLimits are the call quotas of v with the setting that
// names them.
func virtualServerCallLimits(v *agentsmcp.VirtualServer) []agentsmcp.CallLimit {
	if v == nil || len(v.CallQuotas) == 0 {
		return nil
	}
	out := make([]agentsmcp.CallLimit, len(v.CallQuotas))
	for i, q := range v.CallQuotas {
		out[i] = agentsmcp.CallLimit{CallQuota: q, Setting: "virtual_servers[name=" + v.Name + "].call_quotas"}
	}
	return out
}
