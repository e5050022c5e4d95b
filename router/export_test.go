package router

import (
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router/internal/testknob"
	"github.com/agents-mcp/agents-mcp/router/transport/mcphttp"
)

// KnownMethodsForTest exposes the guard's method table to the external tests.
func KnownMethodsForTest() map[string]string { return mcphttp.KnownMethods() }

// SetPrimingDelayForTest sets how long the tools/call fast path holds its
// priming event back, and returns what restores the default.
func SetPrimingDelayForTest(d time.Duration) (restore func()) {
	testknob.PrimingDelay.Store(int64(d))
	return func() { testknob.PrimingDelay.Store(0) }
}

// ListingsHashedForTest is how many tools/list listings r has hashed to
// tell which sessions a registry change concerns.
func (r *Router) ListingsHashedForTest() int64 { return r.digests.hashed.Load() }

// SetListingDigestMemoForTest turns the memo of listing digests on or off
// (off: every tools/list hashes its listing, the baseline), and returns
// what restores it.
func SetListingDigestMemoForTest(on bool) (restore func()) {
	testknob.ListingDigestMemoOff.Store(!on)
	return func() { testknob.ListingDigestMemoOff.Store(false) }
}

// ListingDigestForTest is the digest of the whole catalog's tools/list in
// full mode for a caller with no allowlist, as a session's is recorded.
func (r *Router) ListingDigestForTest() [32]byte {
	return r.listingDigest(nil, agentsmcp.CatalogFull, "")
}
