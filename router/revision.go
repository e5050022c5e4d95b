package router

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/internal/resulttype"
)

// CustomResultBase goes into the result of each of our custom methods
// (see [resulttype.Base]): the revision middleware sets its resultType.
type CustomResultBase = resulttype.Base

// revisionMiddleware keeps each answer to the fields of the revision it is
// given under. go-sdk v1.8.0 sends the cache hints ttlMs and cacheScope,
// which 2026-07-28 defines, on the list results and resources/read of every
// revision; for an earlier one they are removed. The results of our custom
// methods get their resultType (see [CustomResultBase]).
func revisionMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case mcp.CacheableResult:
			if !capabilitiesOf(ctx, req).Sessionless() {
				return withoutCacheHints{r}, nil
			}
		case resulttype.Carrier:
			if b := r.ResultTypeBase(); b.ResultType == "" && capabilitiesOf(ctx, req).Sessionless() {
				b.ResultType = resulttype.Complete
			}
		}
		return res, nil
	}
}

// withoutCacheHints is a result encoded without the top-level ttlMs and
// cacheScope. It embeds the result so that it is an [mcp.Result] still; it
// is the last thing that handles the result before it is encoded.
type withoutCacheHints struct{ mcp.Result }

func (w withoutCacheHints) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(w.Result)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	delete(fields, "ttlMs")
	delete(fields, "cacheScope")
	return json.Marshal(fields)
}
