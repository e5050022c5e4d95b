package embed

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// ollamaAnswer is a fake Ollama /api/embed success.
func ollamaAnswer(dims int) func(int, fakeRequest, http.ResponseWriter) {
	return func(_ int, req fakeRequest, w http.ResponseWriter) {
		in := req.inputs()
		out := make([][]float32, len(in))
		for i, text := range in {
			out[i] = vecOf(text, dims)
		}
		writeJSON(w, 200, map[string]any{"model": req.Body["model"], "embeddings": out, "total_duration": 12345})
	}
}

func newTestOllama(t *testing.T, f *fake, cfg Config) *Ollama {
	t.Helper()
	cfg.BaseURL = f.URL + "/"
	o, err := NewOllama(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.r.backoff = time.Millisecond
	return o
}

func TestOllamaEmbed(t *testing.T) {
	f := newFake(t, ollamaAnswer(768))
	o := newTestOllama(t, f, Config{BatchSize: 2})
	if o.ID() != "ollama:nomic-embed-text:768" || o.Dimensions() != 768 {
		t.Errorf("ID %q, %d dims; want the known size of nomic-embed-text", o.ID(), o.Dimensions())
	}
	texts := []string{"one", "two", "three"}
	got, err := o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if !reflect.DeepEqual(got[i], vecOf(text, 768)) {
			t.Errorf("vector %d is not the embedding of %q", i, text)
		}
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (batches of 2)", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/api/embed" || r.Body["model"] != "nomic-embed-text" || !reflect.DeepEqual(r.inputs(), texts[:2]) {
		t.Errorf("request %s %s %v", r.Method, r.Path, r.Body)
	}
	if _, ok := r.Body["dimensions"]; ok {
		t.Error("dimensions sent although not configured")
	}
	if r.Header.Get("Authorization") != "" {
		t.Error("Authorization sent without a key")
	}
}

func TestOllamaErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   any
		code   string
		inMsg  string
		calls  int
	}{
		{"model not pulled", 404, map[string]any{"error": `model "nomic-embed-text" not found, try pulling it first`}, agentsmcp.EINVALID, "try pulling it first", 1},
		{"loading", 503, map[string]any{"error": "server busy"}, agentsmcp.EUNAVAILABLE, "HTTP 503 after 2 attempts", 2},
	}
	for _, tt := range tests {
		f := newFake(t, func(_ int, _ fakeRequest, w http.ResponseWriter) { writeJSON(w, tt.status, tt.body) })
		o := newTestOllama(t, f, Config{MaxRetries: 1})
		_, err := o.Embed(context.Background(), []string{"x"})
		if agentsmcp.ErrorCode(err) != tt.code || !strings.Contains(agentsmcp.ErrorMessage(err), tt.inMsg) {
			t.Errorf("%s: %v; want %s with %q", tt.name, err, tt.code, tt.inMsg)
		}
		if n := len(f.requests()); n != tt.calls {
			t.Errorf("%s: %d requests, want %d", tt.name, n, tt.calls)
		}
	}
}

func TestOllamaDimensionsAndKey(t *testing.T) {
	f := newFake(t, ollamaAnswer(256))
	o := newTestOllama(t, f, Config{Model: "qwen3-embedding", Dimensions: 256, APIKey: testKey})
	if _, err := o.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if r.Body["dimensions"] != 256.0 || r.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("dimensions %v, Authorization %q", r.Body["dimensions"], r.Header.Get("Authorization"))
	}
	if o.ID() != "ollama:qwen3-embedding:256" {
		t.Errorf("ID %q", o.ID())
	}

	// The server answering another size than configured is an error.
	f2 := newFake(t, ollamaAnswer(384))
	o2 := newTestOllama(t, f2, Config{})
	if _, err := o2.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "384 dimensions for text 0; expected 768") {
		t.Errorf("wrong size: %v", err)
	}
}
