package toolperf

// Tool error classes: what tool performance keeps of a failed call. Tool
// performance is shared by every principal (the planner of one weighs the
// failures of another's calls), so a class is one of these fixed phrases,
// or "http " and a status code: never text of the request or of the
// answer, which hold one caller's arguments and, quoted by an API or a
// transport error, the credential it was sent with.
const (
	ErrorClassTimeout          = "timeout"
	ErrorClassCancelled        = "cancelled"
	ErrorClassConnRefused      = "connection refused"
	ErrorClassConnReset        = "connection reset"
	ErrorClassHostNotFound     = "host not found"
	ErrorClassTLS              = "tls error"
	ErrorClassEgress           = "refused by the egress policy"
	ErrorClassAuthorization    = "authorization required"
	ErrorClassRateLimited      = "rate limited"
	ErrorClassTooLarge         = "answer too large"
	ErrorClassInvalidArguments = "invalid arguments"
	ErrorClassNotFound         = "not found"
	ErrorClassPermissionDenied = "permission denied"
	ErrorClassUnavailable      = "unavailable"
	ErrorClassInternal         = "internal error"
	ErrorClassOther            = "error"
)
