// Package openaitest provides a fake OpenAI-compatible chat-completions
// server, for tests only. It stands in for a paid cloud service (OpenAI) or
// a local model server (Ollama, vLLM) so that tests exercise the real HTTP
// client code, retries and error mapping included, without network access,
// credentials or cost. Nothing in it is meant for production use.
//
// A test scripts the answers: [FakeServer.Enqueue] queues them in order,
// [FakeServer].Handler computes them from the request when the queue is
// empty, and [FakeServer.Requests] shows what the client sent.
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// FakeServer is a fake OpenAI-compatible server answering POST
// /v1/chat/completions. It is safe for concurrent use by the client under
// test; its exported fields must be set before the first request.
type FakeServer struct {
	// URL is the API root to configure as the client's base URL: the
	// server's address followed by "/v1".
	URL string

	// Handler, when set, answers each request that finds the queue empty.
	// It runs on the server's goroutines, possibly concurrently, and must
	// not call t.Fatal.
	Handler func(req ChatRequest) Reply

	// RejectResponseFormat makes the server answer HTTP 400 to any request
	// that carries response_format, as some compatible servers do, without
	// consuming a scripted reply.
	RejectResponseFormat bool

	srv      *httptest.Server
	mu       sync.Mutex
	queue    []Reply
	requests []ChatRequest
}

// ChatRequest is a chat-completion request as the server decoded it.
type ChatRequest struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	// ResponseFormat is the response_format's "type" ("json_object", …),
	// "" when the request had none.
	ResponseFormat      string `json:"-"`
	MaxTokens           int    `json:"max_tokens"`
	MaxCompletionTokens int    `json:"max_completion_tokens"`
	// Authorization is the Authorization header as received ("Bearer
	// KEY"), "" when absent.
	Authorization string `json:"-"`
	// Body is the request body as received, for assertions on other fields.
	Body []byte `json:"-"`
}

// Message is one message of a [ChatRequest], its content as text.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Reply is one scripted answer. With Status zero it is a successful
// completion of Text; otherwise Status and Body are sent verbatim (Body may
// be a success body of an unusual shape when Status is 200).
type Reply struct {
	Text             string
	PromptTokens     int
	CompletionTokens int
	// Model is the model the answer names; default the requested one.
	Model string

	Status int
	Body   string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Delay holds the answer back, as a slow model does; a client that
	// gives up earlier ends the wait.
	Delay time.Duration
}

// Text returns a successful reply with the given token counts.
func Text(text string, promptTokens, completionTokens int) Reply {
	return Reply{Text: text, PromptTokens: promptTokens, CompletionTokens: completionTokens}
}

// Error returns an error reply with an OpenAI-style body carrying message.
func Error(status int, message string) Reply {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": "invalid_request_error", "code": nil,
	}})
	return Reply{Status: status, Body: string(body)}
}

// NewFakeServer starts a server that t's cleanup closes. t may be nil
// where there is none (in an Example); the caller then calls Close.
func NewFakeServer(t testing.TB) *FakeServer {
	s := &FakeServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	if t != nil {
		t.Cleanup(s.srv.Close)
	}
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close shuts the server down, waiting for requests in progress; calling
// it more than once is harmless.
func (s *FakeServer) Close() { s.srv.Close() }

// Enqueue appends replies to the script; each request takes the first.
func (s *FakeServer) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Requests returns the chat requests received so far, in arrival order.
func (s *FakeServer) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.requests...)
}

func (s *FakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeReply(w, Error(http.StatusNotFound, "fake server: no route "+r.Method+" "+r.URL.Path))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeReply(w, Error(http.StatusBadRequest, "fake server: read body: "+err.Error()))
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		writeReply(w, Error(http.StatusBadRequest, "fake server: "+err.Error()))
		return
	}
	req.Authorization = r.Header.Get("Authorization")

	s.mu.Lock()
	s.requests = append(s.requests, req)
	reject := s.RejectResponseFormat && req.ResponseFormat != ""
	var reply Reply
	var scripted bool
	if !reject && len(s.queue) > 0 {
		reply, s.queue, scripted = s.queue[0], s.queue[1:], true
	}
	handler := s.Handler
	s.mu.Unlock()

	switch {
	case reject:
		reply = Error(http.StatusBadRequest, "response_format is not supported by this server")
	case scripted:
	case handler != nil:
		reply = handler(req)
	default:
		reply = Error(http.StatusInternalServerError, "fake server: no scripted reply")
	}
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	if reply.Status == 0 && reply.Model == "" {
		reply.Model = req.Model
	}
	writeReply(w, reply)
}

func decodeRequest(body []byte) (ChatRequest, error) {
	var raw struct {
		ChatRequest
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return ChatRequest{}, fmt.Errorf("decode request: %w", err)
	}
	req := raw.ChatRequest
	req.Body = body
	if raw.ResponseFormat != nil {
		req.ResponseFormat = raw.ResponseFormat.Type
	}
	for _, m := range raw.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: contentText(m.Content)})
	}
	return req, nil
}

// contentText flattens a message content, which the API allows as a string
// or as an array of parts, to its text.
func contentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(c, &parts)
	for _, p := range parts {
		s += p.Text
	}
	return s
}

func writeReply(w http.ResponseWriter, reply Reply) {
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	if reply.Status != 0 {
		w.WriteHeader(reply.Status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id":      "chatcmpl-fake",
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   reply.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": reply.Text},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{
			"prompt_tokens":     reply.PromptTokens,
			"completion_tokens": reply.CompletionTokens,
			"total_tokens":      reply.PromptTokens + reply.CompletionTokens,
		},
	})
}
