package agentsmcp

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds what the agents (package agents) need from the rest of
// the server: a language model, the tool catalog with each tool's health,
// and a way to call a tool in-process. The router, the remote pool and the
// LLM backends implement them; cmd/agents-mcp wires them together.

// LLM completes a conversation: the model behind the thought agent and the
// planner when one is available. Implementations: MCP sampling through the
// calling client, an OpenAI-compatible endpoint.
//
// Complete returns EUNAVAILABLE when the model cannot be reached or keeps
// refusing (after the backend's own retries), EUNAUTHORIZED when it rejects
// the credentials, EINVALID when it rejects the request, ENOTIMPLEMENTED
// when the backend cannot serve it at all (a client without sampling).
// Errors never hold credentials.
type LLM interface {
	Complete(ctx context.Context, req *LLMRequest) (*LLMResponse, error)
}

// LLMRequest is one completion request.
type LLMRequest struct {
	// System is the system prompt; may be empty.
	System   string       `json:"system,omitempty"`
	Messages []LLMMessage `json:"messages"`
	// JSON asks for a single JSON object as the answer; backends with a
	// JSON mode use it, the others rely on the prompt.
	JSON      bool `json:"json,omitempty"`
	MaxTokens int  `json:"maxTokens,omitempty"` // 0: the backend's default
	// Purpose names the request in logs and usage figures: "thought",
	// "plan", "plan-repair", …
	Purpose string `json:"purpose,omitempty"`
}

// LLMMessage is one turn of the conversation.
type LLMMessage struct {
	Role    string `json:"role"` // LLMRoleUser or LLMRoleAssistant
	Content string `json:"content"`
}

// The roles of LLMMessage.
const (
	LLMRoleUser      = "user"
	LLMRoleAssistant = "assistant"
)

// LLMResponse is a completion.
type LLMResponse struct {
	Text    string   `json:"text"`
	Model   string   `json:"model,omitempty"`
	Backend string   `json:"backend"` // "sampling", "openai", …
	Usage   LLMUsage `json:"usage"`
}

// LLMUsage counts tokens, as reported by the backend (zero when it does
// not say).
type LLMUsage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// Add returns the sum of two usages.
func (u LLMUsage) Add(v LLMUsage) LLMUsage {
	return LLMUsage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// ToolInfo is a tool as the agents plan with it: what a client sees in
// tools/list, with its annotations decoded and the health of its source.
type ToolInfo struct {
	Name         string          `json:"name"`
	Source       string          `json:"source"` // "local" or an upstream name
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	ReadOnly     bool            `json:"readOnly,omitempty"`
	// Destructive is true only when the tool declares destructiveHint
	// true: an explicit claim, not MCP's default for unannotated tools.
	Destructive bool `json:"destructive,omitempty"`
	Idempotent  bool `json:"idempotent,omitempty"`
	// Health is the state of the tool's source: HealthReady for local
	// tools, an upstream state ("ready", "degraded", "connecting", "down")
	// otherwise.
	Health string `json:"health"`
}

// HealthReady is the Health of a tool whose source serves it normally.
const HealthReady = "ready"

// HealthDown is the Health of a tool whose upstream is down.
const HealthDown = "down"

// ToolMatch is a ToolInfo found by a search, with its rank score.
type ToolMatch struct {
	ToolInfo
	Score float64 `json:"score"`
	Why   string  `json:"why,omitempty"`
}

// ToolCatalog is every tool the agents may plan with, local and remote.
type ToolCatalog interface {
	// Tool returns one tool; ENOTFOUND when no such tool is registered.
	Tool(ctx context.Context, name string) (*ToolInfo, error)
	// ListTools returns every registered tool, sorted by name.
	ListTools(ctx context.Context) ([]*ToolInfo, error)
	// SearchTools ranks tools by how well they match query, best first, at
	// most limit of them.
	SearchTools(ctx context.Context, query string, limit int) ([]*ToolMatch, error)
}

// ToolCaller calls a tool in-process, as a client's tools/call would:
// arguments are validated against the tool's schema and the call is
// counted in tool performance.
//
// A failure of the tool itself is a result with IsError set; a returned
// error means the call did not happen or did not finish: ENOTFOUND for an
// unknown tool, EINVALID for arguments the schema rejects or a protocol
// error from the tool's server, EUNAVAILABLE for an upstream that is down,
// timed out or refused by its circuit breaker (worth retrying).
//
// req.Session, when set, is the client session the call is made for:
// sampling and elicitation requests of an upstream reach that client.
type ToolCaller interface {
	CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
}
