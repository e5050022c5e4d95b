// Package openai implements [agentsmcp.LLM] against any OpenAI-compatible
// chat-completions endpoint: OpenAI itself, and the same API served by
// Ollama (its /v1 root), vLLM, LM Studio or llama.cpp.
//
// It uses the official client library, github.com/openai/openai-go, for
// the wire format, retries (408, 409, 429, 5xx and connection failures,
// honouring Retry-After) and per-attempt timeouts, and adds what the
// agents need: error codes, a JSON mode that degrades on servers without
// one, and token accounting.
package openai

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Defaults of [Config].
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultModel      = "gpt-4o-mini"
	DefaultTimeout    = 60 * time.Second
	DefaultMaxRetries = 3
)

// Backend is the LLMResponse.Backend of this package's completions.
const Backend = "openai"

// maxRetryDelay caps a server's Retry-After: a server asking for a longer
// wait gets no retry, and the call fails with EUNAVAILABLE at once rather
// than holding the agent for minutes.
const maxRetryDelay = 30 * time.Second

// Config configures a [Client]. Zero values mean the defaults named below.
type Config struct {
	// BaseURL is the API root, the path up to and including /v1, to which
	// "/chat/completions" is added: default [DefaultBaseURL]; Ollama's is
	// "http://127.0.0.1:11434/v1".
	BaseURL string
	// APIKey is sent as a Bearer token; it may be empty for local servers.
	// It is never quoted in errors or logs. The library's OPENAI_*
	// environment variables are deliberately not read: a key meant for
	// OpenAI must not reach another server because a variable was set.
	APIKey string
	// Model names the chat model; default [DefaultModel], which only
	// OpenAI serves, so set it for any other server.
	Model string
	// Timeout bounds each attempt; default [DefaultTimeout]. An attempt
	// that times out is not retried (a model that needed that long once
	// will likely need it again); the caller's context bounds the whole
	// call, retries included.
	Timeout time.Duration
	// MaxRetries is how often a request is retried after HTTP 408, 409,
	// 429 or 5xx or a connection failure; default [DefaultMaxRetries], and
	// a negative value means no retry.
	MaxRetries int
	// HTTPClient sends the requests; default a client of its own. Its
	// Timeout, if any, applies too.
	HTTPClient *http.Client
	// Logger receives a debug line per completion and a notice when JSON
	// mode is given up; default none.
	Logger *slog.Logger
}

// Client is an [agentsmcp.LLM] backed by one model of an OpenAI-compatible
// server. It is safe for concurrent use.
type Client struct {
	chat    openai.ChatCompletionService
	model   string
	name    string // for messages: "openai LLM (MODEL at REDACTED-URL)"
	apiKey  string // only to scrub it from quoted server text
	log     *slog.Logger
	timeout time.Duration
	// completionTokens selects max_completion_tokens over max_tokens:
	// OpenAI's reasoning models reject max_tokens, while many compatible
	// servers only know max_tokens.
	completionTokens bool

	// noResponseFormat is set once the server is known to refuse
	// response_format, so that every later request skips it.
	noResponseFormat atomic.Bool

	requests     atomic.Int64
	inputTokens  atomic.Int64
	outputTokens atomic.Int64
}

var _ agentsmcp.LLM = (*Client)(nil)

// New returns a client for cfg. A malformed config is EINVALID; nothing is
// sent until the first Complete.
func New(cfg Config) (*Client, error) {
	base := strings.TrimRight(cmp.Or(cfg.BaseURL, DefaultBaseURL), "/")
	if err := validate.HTTPURL(base); err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "openai LLM: base URL %s %v", redact.URL(base), err)
	}
	if cfg.Timeout < 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "openai LLM: the timeout must not be negative")
	}
	model := strings.TrimSpace(cmp.Or(cfg.Model, DefaultModel))
	if model == "" {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "openai LLM: a model is required")
	}
	retries := cfg.MaxRetries
	if retries == 0 {
		retries = DefaultMaxRetries
	} else if retries < 0 {
		retries = 0
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	timeout := cmp.Or(cfg.Timeout, DefaultTimeout)
	u, _ := url.Parse(base) // checked above
	c := &Client{
		model:            model,
		name:             "openai LLM (" + model + " at " + redact.URL(base) + ")",
		apiKey:           cfg.APIKey,
		log:              logger,
		timeout:          timeout,
		completionTokens: strings.EqualFold(u.Hostname(), "api.openai.com"),
	}
	// NewChatCompletionService, unlike openai.NewClient, applies only these
	// options and none from the environment.
	c.chat = openai.NewChatCompletionService(
		option.WithBaseURL(base+"/"),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(retries),
		option.WithRequestTimeout(timeout),
		option.WithMaxRetryDelay(maxRetryDelay),
	)
	return c, nil
}

// Name returns "openai", the backend's name.
func (c *Client) Name() string { return Backend }

// Model returns the configured model.
func (c *Client) Model() string { return c.model }

// Usage returns the tokens of every completion served so far.
func (c *Client) Usage() agentsmcp.LLMUsage {
	return agentsmcp.LLMUsage{InputTokens: int(c.inputTokens.Load()), OutputTokens: int(c.outputTokens.Load())}
}

// Requests returns how many Complete calls returned a completion; failed
// calls and retried attempts are not counted.
func (c *Client) Requests() int64 { return c.requests.Load() }

// Complete implements [agentsmcp.LLM]. The system prompt, when set, comes
// first; messages must have the role user or assistant ("system" is
// accepted too). With req.JSON it asks for response_format json_object; a
// server that answers HTTP 400 to that is asked once more without it, and
// if that succeeds, this client never sends response_format again, relying
// on the prompt. req.MaxTokens, when positive, is sent as
// max_completion_tokens to api.openai.com and as max_tokens elsewhere.
//
// Errors: EINVALID for a malformed request (nothing sent) or a 4xx answer
// (the server's message quoted), EUNAUTHORIZED for 401 and 403,
// EUNAVAILABLE for 408, 409, 429 and 5xx after the retries, a timeout, a
// connection failure, an unreadable answer or one without choices. The
// caller's cancellation is returned as such (errors.Is with
// context.Canceled or DeadlineExceeded).
func (c *Client) Complete(ctx context.Context, req *agentsmcp.LLMRequest) (*agentsmcp.LLMResponse, error) {
	params, err := c.params(req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	withFormat := req.JSON && !c.noResponseFormat.Load()
	if withFormat {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	res, a, err := c.call(ctx, params)
	if err != nil && withFormat && a.status == http.StatusBadRequest && ctx.Err() == nil {
		// Only a success without response_format proves it was the cause;
		// a 400 for another reason (a prompt too long) must not turn JSON
		// mode off for good.
		refusal := c.scrub(a.message)
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{}
		var again attempts
		res, again, err = c.call(ctx, params)
		again.count += a.count
		a = again
		if err == nil && c.noResponseFormat.CompareAndSwap(false, true) {
			c.log.Info("llm: the server refuses response_format; JSON mode now relies on the prompt",
				"backend", Backend, "model", c.model, "server_message", refusal)
		}
	}
	latency := time.Since(start)
	if err != nil {
		err = c.mapError(ctx, err, a)
		c.log.Debug("llm completion failed", "backend", Backend, "purpose", req.Purpose, "model", c.model,
			"code", agentsmcp.ErrorCode(err), "error", agentsmcp.ErrorMessage(err), "attempts", a.count, "latency", latency)
		return nil, err
	}
	if len(res.Choices) == 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: the server's answer has no choices; try again later", c.name)
	}
	usage := agentsmcp.LLMUsage{InputTokens: int(res.Usage.PromptTokens), OutputTokens: int(res.Usage.CompletionTokens)}
	c.requests.Add(1)
	c.inputTokens.Add(int64(usage.InputTokens))
	c.outputTokens.Add(int64(usage.OutputTokens))
	model := cmp.Or(res.Model, c.model)
	c.log.Debug("llm completion", "backend", Backend, "purpose", req.Purpose, "model", model,
		"input_tokens", usage.InputTokens, "output_tokens", usage.OutputTokens,
		"attempts", a.count, "latency", latency, "finish_reason", res.Choices[0].FinishReason)
	return &agentsmcp.LLMResponse{Text: res.Choices[0].Message.Content, Model: model, Backend: Backend, Usage: usage}, nil
}

// params converts req, rejecting what no server would accept.
func (c *Client) params(req *agentsmcp.LLMRequest) (openai.ChatCompletionNewParams, error) {
	var p openai.ChatCompletionNewParams
	if req == nil || (req.System == "" && len(req.Messages) == 0) {
		return p, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: the request has no messages", c.name)
	}
	p.Model = c.model
	p.Messages = make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case agentsmcp.LLMRoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case agentsmcp.LLMRoleAssistant:
			p.Messages = append(p.Messages, openai.AssistantMessage(m.Content))
		case "system":
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		default:
			return p, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: message %d has the unknown role %q", c.name, i, m.Role)
		}
	}
	if req.MaxTokens > 0 {
		if c.completionTokens {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	return p, nil
}

// call sends one request, the library's retries included, and reports
// what the attempts saw.
func (c *Client) call(ctx context.Context, p openai.ChatCompletionNewParams) (*openai.ChatCompletion, attempts, error) {
	var a attempts
	res, err := c.chat.New(ctx, p, option.WithMiddleware(a.record))
	return res, a, err
}
