package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// The LLM backends, as AGENTS_MCP_LLM names them.
const (
	LLMAuto     = "auto"     // sampling when the client offers it, else openai when configured, else builtin
	LLMSampling = "sampling" // the calling client's model, through MCP sampling
	LLMOpenAI   = "openai"   // an OpenAI-compatible endpoint
	LLMBuiltin  = "builtin"  // no model: plans from memory and tool search
)

// SamplingLLM asks the model of the client that made the request, through
// MCP sampling (sampling/createMessage). It works on every transport that
// keeps a session: streamable HTTP, legacy SSE and stdio.
type SamplingLLM struct {
	Session *mcp.ServerSession
	// Timeout bounds one request; a person may have to approve it in the
	// client. Default 3 minutes.
	Timeout time.Duration
}

// Complete implements agentsmcp.LLM.
func (s *SamplingLLM) Complete(ctx context.Context, req *agentsmcp.LLMRequest) (*agentsmcp.LLMResponse, error) {
	if !ClientCanSample(s.Session) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "the client did not declare sampling")
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !ClientAnswers(ctx, s.Session) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "the client declared sampling but does not answer the server's requests on its transport")
	}
	params := createMessageParams(req)
	res, err := s.Session.CreateMessage(ctx, params)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the client's model did not answer within %v", timeout)
		}
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "sampling through the client failed: %v", err)
	}
	NoteClientAnswered(s.Session)
	text, ok := res.Content.(*mcp.TextContent)
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the client's model answered with %T, not text", res.Content)
	}
	return &agentsmcp.LLMResponse{Text: text.Text, Model: res.Model, Backend: LLMSampling}, nil
}

// createMessageParams is the sampling request that asks a client's model
// req: the same for a session's sampling request and for an MRTR
// inputRequest, and a function of req alone (see agents/mcptools' mrtrLLM).
func createMessageParams(req *agentsmcp.LLMRequest) *mcp.CreateMessageParams {
	params := &mcp.CreateMessageParams{SystemPrompt: req.System, MaxTokens: int64(req.MaxTokens)}
	if params.MaxTokens <= 0 {
		params.MaxTokens = 4096
	}
	if req.JSON {
		// Sampling has no JSON mode: the instruction goes with the prompt.
		params.SystemPrompt = strings.TrimSpace(params.SystemPrompt + "\n\nAnswer with one JSON object and nothing else.")
	}
	for _, m := range req.Messages {
		params.Messages = append(params.Messages, &mcp.SamplingMessage{Role: mcp.Role(m.Role), Content: &mcp.TextContent{Text: m.Content}})
	}
	return params
}

// LLMChooser picks the model for one request, per AGENTS_MCP_LLM: a nil LLM
// means the builtin planner.
type LLMChooser struct {
	Mode   string        // LLMAuto (default), LLMSampling, LLMOpenAI, LLMBuiltin
	OpenAI agentsmcp.LLM // nil when no endpoint is configured
}

// Choose returns the LLM for a request from session (nil: builtin), or an
// error when the configured backend cannot serve it: sampling asked for by
// a client that does not offer it, openai without an endpoint.
func (c LLMChooser) Choose(session *mcp.ServerSession) (agentsmcp.LLM, error) {
	switch c.Mode {
	case LLMBuiltin:
		return nil, nil
	case LLMSampling:
		if !ClientCanSample(session) {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "AGENTS_MCP_LLM is sampling, but this client does not offer sampling (a client of MCP 2026-07-28 is asked only within a call, through input_required); connect with a client that does, or choose another backend")
		}
		return &SamplingLLM{Session: session}, nil
	case LLMOpenAI:
		if c.OpenAI == nil {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "AGENTS_MCP_LLM is openai, but no OPENAI_BASE_URL/OPENAI_API_KEY is configured")
		}
		return c.OpenAI, nil
	case LLMAuto, "":
		if ClientCanSample(session) {
			return &SamplingLLM{Session: session}, nil
		}
		if c.OpenAI != nil {
			return c.OpenAI, nil
		}
		return nil, nil
	}
	return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "unknown LLM backend %q", c.Mode)
}

// ForCall returns the model of a tool call (req, with ctx its context) whose client waits while the
// model is asked (generate_thoughts, generate_plan, run_task), and whether
// that model is the client's asked through MRTR: a request of MCP
// 2026-07-28 or later that declares sampling in its own capabilities gets
// its model through sampling/createMessage inputRequests (agents/mcptools'
// mrtrLLM), when mrtr says the server can seal their requestState. Every other
// request gets Choose of its session. With AGENTS_MCP_LLM sampling, a
// 2026-07-28 request that does not declare sampling is refused.
func (c LLMChooser) ForCall(ctx context.Context, req *mcp.CallToolRequest, mrtr bool) (llm agentsmcp.LLM, viaMRTR bool, err error) {
	if !IsMRTRClient(ctx, req) || (c.Mode != LLMSampling && c.Mode != LLMAuto && c.Mode != "") {
		var ss *mcp.ServerSession
		if req != nil {
			ss = req.Session
		}
		llm, err := c.Choose(ss)
		return llm, false, err
	}
	declared := mcpwire.CallCapabilities(ctx, req).Sampling()
	switch {
	case declared && mrtr:
		return nil, true, nil
	case c.Mode == LLMSampling && !declared:
		return nil, false, agentsmcp.Errorf(agentsmcp.EINVALID, "AGENTS_MCP_LLM is sampling, but this request does not declare the sampling capability (a client of MCP 2026-07-28 declares it in each request's _meta); declare it, or choose another backend")
	case c.Mode == LLMSampling:
		return nil, false, agentsmcp.Errorf(agentsmcp.EINVALID, "AGENTS_MCP_LLM is sampling, but this server seals no requestState, which asking a client of MCP 2026-07-28 takes; choose another backend")
	}
	if c.OpenAI != nil {
		return c.OpenAI, false, nil
	}
	return nil, false, nil
}

// Model is Choose for work that has a builtin way to go on: the LLM for
// session, or nil (builtin) when the configured backend cannot serve it.
func (c LLMChooser) Model(session *mcp.ServerSession) agentsmcp.LLM {
	llm, err := c.Choose(session)
	if err != nil {
		return nil
	}
	return llm
}

// completeJSON asks llm for a JSON answer and decodes it into out, with at
// most attempts tries: an answer that does not parse, or that check
// rejects, goes back to the model with the error, so that it repairs its
// own answer. It never accepts an invalid answer: after the last attempt
// it returns EINVALID with the last problem.
func completeJSON(ctx context.Context, llm agentsmcp.LLM, req *agentsmcp.LLMRequest, attempts int, out any, check func() error) (agentsmcp.LLMUsage, int, error) {
	var usage agentsmcp.LLMUsage
	req.JSON = true
	messages := req.Messages
	var problem string
	for n := 1; n <= attempts; n++ {
		r := *req
		r.Messages = messages
		if n > 1 {
			r.Purpose = req.Purpose + "-repair"
		}
		res, err := llm.Complete(ctx, &r)
		if err != nil {
			return usage, n, err
		}
		usage.InputTokens += res.Usage.InputTokens
		usage.OutputTokens += res.Usage.OutputTokens
		reflect.ValueOf(out).Elem().SetZero() // nothing of an earlier answer stays
		problem = decodeAnswer(res.Text, out)
		if problem == "" && check != nil {
			if err := check(); err != nil {
				problem = agentsmcp.ErrorMessage(err)
			}
		}
		if problem == "" {
			return usage, n, nil
		}
		messages = append(messages[:len(messages):len(messages)],
			agentsmcp.LLMMessage{Role: agentsmcp.LLMRoleAssistant, Content: res.Text},
			agentsmcp.LLMMessage{Role: agentsmcp.LLMRoleUser, Content: fmt.Sprintf(repairPrompt, problem)})
	}
	return usage, attempts, agentsmcp.Errorf(agentsmcp.EINVALID, "the model's answer was still invalid after %d attempts: %s", attempts, problem)
}

// decodeAnswer decodes the JSON object of a model's answer into out,
// tolerating a Markdown code fence around it; it returns what is wrong, or
// "".
func decodeAnswer(text string, out any) string {
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "```") {
		text = strings.TrimPrefix(text, "```json")
		text = strings.TrimPrefix(text, "```")
		text = strings.TrimSuffix(strings.TrimSpace(text), "```")
	}
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return "the answer holds no JSON object"
	}
	if err := json.Unmarshal([]byte(text[start:end+1]), out); err != nil {
		return "the answer is not valid JSON for the requested shape: " + err.Error()
	}
	return ""
}
