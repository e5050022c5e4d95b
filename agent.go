package agentsmcp

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LLM completes a conversation. EUNAVAILABLE, EUNAUTHORIZED, EINVALID,
// ENOTIMPLEMENTED (no sampling). Errors hold no credentials.
type LLM interface {
	Complete(ctx context.Context, req *LLMRequest) (*LLMResponse, error)
}

// LLMRequest is one completion request.
type LLMRequest struct {
	// System is the system prompt; may be empty.
	System   string       `json:"system,omitempty"`
	Messages []LLMMessage `json:"messages"`
	// JSON asks for one JSON object as the answer.
	JSON      bool `json:"json,omitempty"`
	MaxTokens int  `json:"maxTokens,omitempty"` // 0: the backend's default
	// Purpose names the request in logs: "thought", "plan", …
	Purpose string `json:"purpose,omitempty"`
}

// LLMMessage is one turn of the conversation.
type LLMMessage struct {
	Role    string `json:"role"` // LLMRoleUser or LLMRoleAssistant
	Content string `json:"content"`
}

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

// LLMUsage counts tokens as the backend reports them.
type LLMUsage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// ToolInfo is a tool as the agents plan with it, with its source's health.
type ToolInfo struct {
	Name         string          `json:"name"`
	Source       string          `json:"source"` // "local" or an upstream name
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	ReadOnly     bool            `json:"readOnly,omitempty"`
	// Destructive only when the tool declares destructiveHint true.
	Destructive bool `json:"destructive,omitempty"`
	Idempotent  bool `json:"idempotent,omitempty"`
	// Health is HealthReady for local tools, else the upstream's state.
	Health string `json:"health"`
}

// Tool health values.
const (
	HealthReady = "ready"
	HealthDown  = "down"
)

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

// ToolCaller calls a tool in-process as tools/call would (validated,
// counted). A tool failure is a result with IsError; errors: ENOTFOUND,
// EINVALID, EUNAVAILABLE (retryable). req.Session, when set, receives the
// upstream's sampling and elicitation.
type ToolCaller interface {
	CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
}
