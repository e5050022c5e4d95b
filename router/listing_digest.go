package router

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router/internal/testknob"
)

// This file memoises the digest of a caller's tools/list (see
// [Router.listingDigest]). Every tools/list page and every subscriptions/
// listen stream records the digest of the caller's whole listing, and
// every registry change re-digests the listing of every session that
// listed: on a catalog of a thousand tools that is megabytes of JSON hashed
// each time. What a listing shows is fixed by the caller's allowlist, the
// catalog mode, the virtual server (its definition) and the registry's
// generation, so the digest is kept under the first three and reused while
// the other two stay the same: the sessions of one principal (or of callers
// with the same allowlist) share it, and a tools/list that finds the
// registry unchanged hashes nothing.

// maxListingDigests bounds the memo: past it, the memo starts afresh. The
// keys are allowlists × modes × virtual servers, a handful in practice; the
// bound only stops a server with very many distinct allowlists from
// growing the memo without end.
const maxListingDigests = 4096

// digestKey is what, besides the registry, decides a listing.
type digestKey struct {
	allow   string // the caller's allowlist patterns joined by NUL; "" admits everything
	mode    agentsmcp.CatalogMode
	virtual string // "" for the whole catalog
}

// digestMemo is a digest and the state of the registry and of the virtual
// server it was made from.
type digestMemo struct {
	gen    uint64
	server *agentsmcp.VirtualServer // nil for the whole catalog or a server that is gone
	digest [sha256.Size]byte
	// made says digest was set; false after done is closed means the
	// hashing panicked, and a waiter hashes the listing itself.
	made bool
	// done is closed once digest is set, or its hashing failed; until then
	// other callers wait for it rather than hash the same listing again.
	done chan struct{}
}

// listingDigests is the memo of [Router.listingDigest].
type listingDigests struct {
	mu    sync.Mutex
	byKey map[digestKey]*digestMemo
	// hashed counts the listings hashed, memoised or not (what the memo
	// saves shows in it).
	hashed atomic.Int64
}

// allowKey is p's allowlist as a [digestKey] field.
func allowKey(p *agentsmcp.Principal) string {
	if !p.Restricted() {
		return ""
	}
	// A NUL cannot be in a pattern that matches a tool name, and a
	// restricted list is never empty, so no allowlist joins to "".
	return strings.Join(p.Tools, "\x00") + "\x00"
}

// listingDigest is a digest of [Router.listedTools]: of each tool as JSON,
// in order; memoised while the registry and the virtual server stay as
// they are.
func (r *Router) listingDigest(p *agentsmcp.Principal, mode agentsmcp.CatalogMode, name string) [sha256.Size]byte {
	if testknob.ListingDigestMemoOff.Load() {
		return r.hashListing(p, mode, name)
	}
	key := digestKey{allow: allowKey(p), mode: mode, virtual: name}
	// The generation and the server are read before the listing is made:
	// if they change meanwhile, the memo is keyed by the old ones and the
	// next caller, which reads the new ones, makes it again.
	gen := r.ToolsGeneration()
	var server *agentsmcp.VirtualServer
	if name != "" {
		server, _ = r.VirtualServer(name)
	}
	d := &r.digests
	d.mu.Lock()
	if m, ok := d.byKey[key]; ok && m.gen == gen && m.server == server {
		d.mu.Unlock()
		<-m.done
		if !m.made {
			return r.hashListing(p, mode, name)
		}
		return m.digest
	}
	if d.byKey == nil || len(d.byKey) >= maxListingDigests {
		d.byKey = map[digestKey]*digestMemo{}
	}
	m := &digestMemo{gen: gen, server: server, done: make(chan struct{})}
	d.byKey[key] = m
	d.mu.Unlock()
	defer func() {
		if !m.made { // hashListing panicked: forget the memo it left unset
			d.mu.Lock()
			if d.byKey[key] == m {
				delete(d.byKey, key)
			}
			d.mu.Unlock()
		}
		close(m.done)
	}()
	m.digest = r.hashListing(p, mode, name)
	m.made = true
	return m.digest
}

// hashListing hashes the listing of p in mode on the virtual server name.
func (r *Router) hashListing(p *agentsmcp.Principal, mode agentsmcp.CatalogMode, name string) [sha256.Size]byte {
	r.digests.hashed.Add(1)
	tools := r.listedTools(p, mode, name)
	h := sha256.New()
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range tools {
		if e, ok := r.tools[t.Name]; ok && e.tool == t {
			h.Write(e.raw)
		} else if raw, err := json.Marshal(t); err == nil {
			h.Write(raw)
		}
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
