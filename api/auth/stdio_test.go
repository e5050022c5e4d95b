package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestAuthenticateStdio(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	a, err := New(Config{
		Keys: []Key{{Name: "agent", Secret: mcpKey, Scopes: []string{"mcp"}}, {Name: "viewer", Secret: adminKey, Scopes: []string{"admin:read"}}},
		JWT:  is.jwtConfig(),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		token   string
		wantID  string
		wantErr []string // substrings of the error
	}{
		{"key", mcpKey, "key:" + sha256Hex(mcpKey)[:12], nil},
		{"jwt", rs.sign(t, claims("alice", "mcp")), "jwt:alice", nil},
		{"missing", "", "", []string{"AGENTS_MCP_API_KEY", "credentials configured", "scope mcp"}},
		{"wrong", "not-a-key", "", []string{"AGENTS_MCP_API_KEY was not accepted", "unknown API key"}},
		{"no mcp scope", adminKey, "", []string{"AGENTS_MCP_API_KEY", "lacks scope mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.AuthenticateStdio(t.Context(), tt.token)
			if tt.wantErr == nil {
				if err != nil || p.ID != tt.wantID {
					t.Fatalf("got %+v, %v; want %s", p, err, tt.wantID)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted as %+v", p)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			var e *Error
			if !errors.As(err, &e) || agentsmcp.ErrorCode(err) != agentsmcp.EUNAUTHORIZED {
				t.Errorf("error %v does not wrap an *Error with code unauthorized", err)
			}
			if tt.token != "" && strings.Contains(err.Error(), tt.token) {
				t.Errorf("error shows the credential: %v", err)
			}
		})
	}

	open, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"", "anything"} {
		if p, err := open.AuthenticateStdio(t.Context(), tok); err != nil || p.ID != agentsmcp.AnonymousPrincipal {
			t.Errorf("no auth configured, key %q: %+v %v; want anonymous", tok, p, err)
		}
	}
}

// The stdio wiring: the principal put into the context given to the
// server's Run/Connect reaches every tool handler's context, with no
// TokenInfo involved.
func TestStdioPrincipalReachesHandler(t *testing.T) {
	a, err := New(Config{Keys: []Key{{Name: "agent", Secret: mcpKey, Scopes: []string{"mcp"}}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.AuthenticateStdio(t.Context(), mcpKey)
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		id := "none"
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			id = "TokenInfo " + req.Extra.TokenInfo.UserID
		} else if p := agentsmcp.PrincipalFrom(ctx); p != nil {
			id = p.ID
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: id}}}, nil, nil
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := server.Connect(agentsmcp.WithPrincipal(ctx, p), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != p.ID {
		t.Errorf("handler saw principal %q, want %q", got, p.ID)
	}
}
