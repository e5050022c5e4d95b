package agentsmcp

// MaxToolCallBatch bounds one call of
// [ToolPerformanceService.RecordToolCalls], and so the size of one store
// transaction.
const MaxToolCallBatch = 1000
