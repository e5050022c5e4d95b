package sse

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestDiscoverIsNotServedOnTheLegacyTransport: HTTP+SSE carries the session
// revisions, so server/discover, the sessionless revisions' probe, gets
// method not found before and after initialize, and the client falls back
// to initialize on the same session.
func TestDiscoverIsNotServedOnTheLegacyTransport(t *testing.T) {
	_, ts := start(t, nil)
	s := openStream(t, ts)
	s.mustPost(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}}}`)
	if m := s.response(1); m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound || m.Result != nil {
		t.Fatalf("server/discover before initialize: result %s, error %+v", m.Result, m.Error)
	}
	s.mustPost(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	m := s.response(2)
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &init) != nil || init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize after the refused discover: result %s, error %+v; want protocol 2025-11-25", m.Result, m.Error)
	}
	s.mustPost(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.mustPost(`{"jsonrpc":"2.0","id":3,"method":"server/discover"}`)
	if m := s.response(3); m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("server/discover after initialize: %+v", m)
	}
}
