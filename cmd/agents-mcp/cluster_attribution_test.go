package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// This file tells which replica each call of the cluster test's drivers
// went through, from HAProxy's log: every driver call carries a unique
// callIDHeader, which HAProxy captures and logs with the server it sent
// the request to. A SIGKILL is not instantaneous: while the victim dies,
// its kernel still accepts connections, so a call that starts just after
// the kill can be sent to it and fail. Such a call was on the killed
// replica; a failed call that went through a surviving one is a failure.

// unpooledClient opens a connection for each request. The calls of the
// cluster test do not share a client's pool of connections to HAProxy:
// after a call on the killed replica ends with a 502, HAProxy closes that
// client connection, and another call that took it from the pool at that
// instant would fail with EOF before HAProxy read it, through no replica.
var unpooledClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// callIDHeader carries the id of a driver's call, for HAProxy's log.
const callIDHeader = "X-Cluster-Call"

// haproxyCallLog are the HAProxy configuration lines that log each
// request's call id, method, server, status and termination state, one
// line a request on HAProxy's stdout (parsed by callServers).
const haproxyCallLog = `  http-request capture req.hdr(` + callIDHeader + `) len 64
  log-format "cluster-call %[capture.req.hdr(0)] %HM %s %ST %ts"
`

var callSeq atomic.Int64

// newCallID returns a call id unique in this test process.
func newCallID(driver string) string { return fmt.Sprintf("%s-%d", driver, callSeq.Add(1)) }

type callIDKey struct{}

// withCallID returns ctx carrying id, for mcpGoCallHeaders.
func withCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// mcpGoCallHeaders is mcp-go's header function: the call id of ctx.
func mcpGoCallHeaders(ctx context.Context) map[string]string {
	if id, ok := ctx.Value(callIDKey{}).(string); ok {
		return map[string]string{callIDHeader: id}
	}
	return nil
}

// callServers reads HAProxy's log: for each call id, the servers its
// POSTs were sent to ("r0" is replica 0; "<NOSRV>" none).
func callServers(log string) map[string][]string {
	servers := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[0] != "cluster-call" || f[1] == "-" || f[2] != "POST" {
			continue
		}
		servers[f[1]] = append(servers[f[1]], f[3])
	}
	return servers
}
