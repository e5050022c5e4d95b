package embed

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The remote embedders are tested against fakes: httptest servers that
// speak each service's API from a script. The real services are paid and
// unreachable from here; live tests run when their keys are set.

// fake is a scripted embedding server. Each request is recorded; answer
// decides the response from the request's number (0-based) and body.
type fake struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []fakeRequest
	answer func(n int, req fakeRequest, w http.ResponseWriter)
}

type fakeRequest struct {
	Ctx          context.Context // ends when the client gives up
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

// inputs returns the "input" array of an OpenAI or Ollama request.
func (r fakeRequest) inputs() []string {
	raw, _ := r.Body["input"].([]any)
	out := make([]string, len(raw))
	for i, x := range raw {
		out[i], _ = x.(string)
	}
	return out
}

func newFake(t *testing.T, answer func(n int, req fakeRequest, w http.ResponseWriter)) *fake {
	t.Helper()
	f := &fake{answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		req := fakeRequest{Ctx: r.Context(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
		_ = json.Unmarshal(data, &req.Body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		f.answer(n, req, w)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.reqs...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// vecOf is the fake's embedding of a text: distinct per text, so a test
// can tell which vector belongs to which input.
func vecOf(text string, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(len(text)*10 + i)
	}
	if len(text) > 0 {
		v[0] += float32(text[len(text)-1])
	}
	return v
}

// sleeps replaces r's wait with a recorder, so retry tests take no time.
func sleeps(r *remote) *[]time.Duration {
	var mu sync.Mutex
	got := &[]time.Duration{}
	r.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*got = append(*got, d)
		mu.Unlock()
		return ctx.Err()
	}
	return got
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"7", 7 * time.Second, true},
		{" 12 ", 12 * time.Second, true},
		{"99999999999", maxBackoff, true},
		{"-3", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"Sat, 01 Mar 2025 12:00:05 GMT", 5 * time.Second, true},
		{"Sat, 01 Mar 2025 11:59:00 GMT", 0, true},
		{"Saturday, 01-Mar-25 12:00:09 GMT", 9 * time.Second, true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name    string
		make    func(Config) (*remote, error)
		cfg     Config
		id      string
		batch   int
		retries int
		base    string
	}{
		{"openai defaults", openAIRemote, Config{}, "openai:text-embedding-3-small:1536", 64, DefaultMaxRetries, OpenAIBaseURL},
		{"openai large", openAIRemote, Config{Model: "text-embedding-3-large"}, "openai:text-embedding-3-large:3072", 64, DefaultMaxRetries, OpenAIBaseURL},
		{"openai shortened", openAIRemote, Config{Model: "text-embedding-3-large", Dimensions: 256}, "openai:text-embedding-3-large:256", 64, DefaultMaxRetries, OpenAIBaseURL},
		{"openai unknown model", openAIRemote, Config{Model: "bge-small", BaseURL: "http://vllm:8000/v1/", BatchSize: 8, MaxRetries: -1}, "openai:bge-small:0", 8, 0, "http://vllm:8000/v1"},
		{"ollama defaults", ollamaRemote, Config{}, "ollama:nomic-embed-text:768", 32, DefaultMaxRetries, OllamaBaseURL},
		{"ollama tag", ollamaRemote, Config{Model: "all-minilm:33m", MaxRetries: 2}, "ollama:all-minilm:33m:384", 32, 2, OllamaBaseURL},
	}
	for _, tt := range tests {
		r, err := tt.make(tt.cfg)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if r.id() != tt.id || r.batchSize != tt.batch || r.retries != tt.retries || r.baseURL != tt.base || r.timeout != DefaultTimeout {
			t.Errorf("%s: id %q batch %d retries %d base %q timeout %v; want %q %d %d %q %v",
				tt.name, r.id(), r.batchSize, r.retries, r.baseURL, r.timeout, tt.id, tt.batch, tt.retries, tt.base, DefaultTimeout)
		}
		if r.sendDims != (tt.cfg.Dimensions > 0) {
			t.Errorf("%s: sendDims %v for configured dimensions %d", tt.name, r.sendDims, tt.cfg.Dimensions)
		}
	}
}

func openAIRemote(cfg Config) (*remote, error) {
	o, err := NewOpenAI(cfg)
	if err != nil {
		return nil, err
	}
	return o.r, nil
}

func ollamaRemote(cfg Config) (*remote, error) {
	o, err := NewOllama(cfg)
	if err != nil {
		return nil, err
	}
	return o.r, nil
}
