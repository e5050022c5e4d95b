package router

import (
	"context"
	"crypto/rand"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router/transport/mcphttp"
)

// This file saves a metered tools/call over HTTP one round trip to the
// call counters: the guard ([Router.callQuotaRefusal]) charges the call,
// with the same atomic add that [agentsmcp.CallQuotaEnforcer.Charge]
// makes, instead of reading the counters; the call, when it gets to be
// charged, finds the charge made (a ticket in a request header that only
// the router sets) and is not charged again. A call that never gets there
// (refused for its arguments or by its caller's allowlist, or dropped) has
// its count given back when its HTTP request ends, so that the count is
// the same as if the call alone had charged it.

// prechargedHeader carries the ticket of a call the guard charged, from
// the guard to the call ([mcp.RequestExtra]). The transport's Handler
// removes any value a client sent, on every path, and so does the guard;
// a ticket is 26 random characters, known only to the router.
const prechargedHeader = mcphttp.PrechargedHeader

// prechargeRefundTimeout bounds the refund of a charge the call did not
// use.
const prechargeRefundTimeout = 10 * time.Second

// precharge is a charge made by the guard, until its call takes it.
type precharge struct {
	principal, tool string
	refund          func(context.Context) error
}

// precharge charges the call of tool by principal in req against limits,
// as Charge does, and, when it is not refused, gives req the ticket that
// the call takes (takePrecharge). The charge is given back when req ends
// if the call has not taken it.
func (r *Router) precharge(ctx context.Context, req *http.Request, principal string, limits []agentsmcp.CallLimit, upstream, tool string) error {
	refund, err := r.callQuotas.Precharge(ctx, principal, limits, upstream, tool)
	if err != nil {
		return err
	}
	ticket := rand.Text()
	r.precharges.Store(ticket, &precharge{principal: principal, tool: tool, refund: refund})
	req.Header.Set(prechargedHeader, ticket)
	context.AfterFunc(req.Context(), func() {
		v, unused := r.precharges.LoadAndDelete(ticket)
		if !unused {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), prechargeRefundTimeout)
		defer cancel()
		if err := v.(*precharge).refund(ctx); err != nil {
			r.logger.Warn("call quota: the charge of a call that did not run was not given back", "tool", tool, "error", err)
		}
	})
	return nil
}

// takePrecharge reports whether the guard charged the call of tool by
// principal that req carries, and takes that charge: it is not given back.
func (r *Router) takePrecharge(req mcp.Request, principal, tool string) bool {
	if req == nil {
		return false
	}
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return false
	}
	ticket := extra.Header.Get(prechargedHeader)
	if ticket == "" {
		return false
	}
	v, ok := r.precharges.Load(ticket)
	if !ok {
		return false
	}
	pc := v.(*precharge)
	return pc.principal == principal && pc.tool == tool && r.precharges.CompareAndDelete(ticket, v)
}
