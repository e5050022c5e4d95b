// Package resulttype is the resultType field of the results of the
// router's custom methods, which the router's revision middleware fills
// in, shared by the router and the Tasks extension (router/tasks).
package resulttype

// Base goes into the result of each of the router's custom methods
// (added with [mcp.AddReceivingCustomMethod]), beside [mcp.ResultBase]:
// MCP 2026-07-28 requires resultType on every result, and go-sdk sets it on
// its own results only. For a request of 2026-07-28 or later, a ResultType
// the handler left empty is set to [Complete] after the handler returns; for
// an earlier revision, which does not define the field, it stays empty and
// is not sent.
type Base struct {
	ResultType string `json:"resultType,omitempty"`
}

// ResultTypeBase makes the results that embed a Base a [Carrier].
func (b *Base) ResultTypeBase() *Base { return b }

// Carrier is a result that embeds a [Base].
type Carrier interface{ ResultTypeBase() *Base }

// Complete is the resultType of a final result (2026-07-28).
const Complete = "complete"
