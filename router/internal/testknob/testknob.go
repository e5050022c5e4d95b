// Package testknob holds the settings that only tests change, shared by
// the router's tests and the transports they drive, which live in other
// packages. Shipped code reads them and never sets them.
package testknob

import "sync/atomic"

// PrimingDelay, when not zero, replaces how long the tools/call fast path
// holds its priming event back (router/transport/mcphttp), to make a call
// quick or slow for sure.
var PrimingDelay atomic.Int64

// ListingDigestMemoOff, when set, makes every tools/list digest its
// listing afresh (router/listing_digest.go): the baseline of the memo's
// benchmark.
var ListingDigestMemoOff atomic.Bool
