// Package toolperf holds the arithmetic of tool performance over the root's
// types: a batch of [agentsmcp.ToolCall] summed per tool (SumCalls), the
// latency histogram (LatencyBucket, Percentile), the error class kept of a
// failed call (ErrorClass, CommonErrors, LastErrorClass) and the
// reliability estimate of a tool from its decayed outcomes (Estimate,
// Prior, CoolDownAfter under an [ReliabilityPolicy]).
//
// The stores use it to record calls, the agents to weigh tools. It is a
// leaf: it imports the root only.
package toolperf
