package embed

import (
	"context"
	"math"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

const pineconeTestKey = "pcsk_test_SECRET_abcdef"

// pineconeTexts returns the "inputs" of a Pinecone embed request.
func pineconeTexts(r fakeRequest) []string {
	raw, _ := r.Body["inputs"].([]any)
	out := make([]string, len(raw))
	for i, x := range raw {
		m, _ := x.(map[string]any)
		out[i], _ = m["text"].(string)
	}
	return out
}

// pineconeAnswer is a fake success of Pinecone's inference /embed.
func pineconeAnswer(dims int) func(int, fakeRequest, http.ResponseWriter) {
	return func(_ int, req fakeRequest, w http.ResponseWriter) {
		texts := pineconeTexts(req)
		data := make([]map[string]any, len(texts))
		for i, text := range texts {
			data[i] = map[string]any{"vector_type": "dense", "values": vecOf(text, dims)}
		}
		writeJSON(w, 200, map[string]any{"model": req.Body["model"], "vector_type": "dense", "data": data, "usage": map[string]any{"total_tokens": 7}})
	}
}

func newTestPinecone(t *testing.T, f *fake, cfg Config) *Pinecone {
	t.Helper()
	cfg.BaseURL = f.URL
	cfg.APIKey = pineconeTestKey
	p, err := NewPinecone(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.r.backoff = time.Millisecond
	return p
}

func TestPineconeEmbed(t *testing.T) {
	f := newFake(t, pineconeAnswer(1024))
	p := newTestPinecone(t, f, Config{BatchSize: 2})
	texts := []string{"stored passage", "another", "third"}
	got, err := p.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if !reflect.DeepEqual(got[i], vecOf(text, 1024)) {
			t.Errorf("vector %d is not the embedding of %q", i, text)
		}
	}
	q := p.ForQueries()
	if _, err := q.Embed(context.Background(), []string{"what is searched"}); err != nil {
		t.Fatal(err)
	}
	if p.ID() != "pinecone:multilingual-e5-large:1024" || q.ID() != p.ID() {
		t.Errorf("IDs %q and %q; want both pinecone:multilingual-e5-large:1024", p.ID(), q.ID())
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (2 batches + 1 query)", len(reqs))
	}
	for i, r := range reqs {
		if r.Method != "POST" || r.Path != "/embed" || r.Header.Get("Api-Key") != pineconeTestKey || r.Header.Get("X-Pinecone-Api-Version") == "" {
			t.Errorf("request %d: %s %s, headers %v", i, r.Method, r.Path, r.Header)
		}
		params, _ := r.Body["parameters"].(map[string]any)
		wantType := "passage"
		if i == 2 {
			wantType = "query"
		}
		if r.Body["model"] != "multilingual-e5-large" || params["input_type"] != wantType || params["truncate"] != "END" {
			t.Errorf("request %d: body %v; want input_type %s", i, r.Body, wantType)
		}
		if _, ok := params["dimension"]; ok {
			t.Errorf("request %d: dimension sent although not configured", i)
		}
	}
	if !reflect.DeepEqual(pineconeTexts(reqs[0]), texts[:2]) || !reflect.DeepEqual(pineconeTexts(reqs[1]), texts[2:]) {
		t.Errorf("batches %v %v", pineconeTexts(reqs[0]), pineconeTexts(reqs[1]))
	}
}

func TestPineconeDimensionParameter(t *testing.T) {
	f := newFake(t, pineconeAnswer(384))
	p := newTestPinecone(t, f, Config{Model: "llama-text-embed-v2", Dimensions: 384})
	if _, err := p.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	params, _ := f.requests()[0].Body["parameters"].(map[string]any)
	if params["dimension"] != 384.0 || p.ID() != "pinecone:llama-text-embed-v2:384" {
		t.Errorf("dimension %v, ID %q", params["dimension"], p.ID())
	}
}

func TestPineconeErrors(t *testing.T) {
	tests := []struct {
		name   string
		answer func(n int, req fakeRequest, w http.ResponseWriter)
		code   string
		inMsg  string
		calls  int
	}{
		{"rate limited then ok", func(n int, req fakeRequest, w http.ResponseWriter) {
			if n == 0 {
				writeJSON(w, 429, map[string]any{"error": map[string]any{"code": "RESOURCE_EXHAUSTED", "message": "Request failed. You've reached the max embedding tokens per minute"}})
				return
			}
			pineconeAnswer(1024)(n, req, w)
		}, "", "", 2},
		{"server errors", func(_ int, _ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 500, map[string]any{"error": map[string]any{"code": "INTERNAL", "message": "oops"}})
		}, agentsmcp.EUNAVAILABLE, "HTTP 500 after 3 attempts", 3},
		{"bad model", func(_ int, _ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 400, map[string]any{"error": map[string]any{"code": "INVALID_ARGUMENT", "message": "Model 'nope' not found"}, "status": 400})
		}, agentsmcp.EINVALID, "Model 'nope' not found", 1},
		{"bad key", func(_ int, _ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 401, map[string]any{"error": map[string]any{"code": "UNAUTHENTICATED", "message": "Invalid API Key " + pineconeTestKey}})
		}, agentsmcp.EUNAUTHORIZED, "refused the API key", 1},
		{"sparse model", func(_ int, _ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"model": "pinecone-sparse-english-v0", "vector_type": "sparse",
				"data": []any{map[string]any{"vector_type": "sparse", "sparse_values": []float32{0.5}, "sparse_indices": []int{7}}}})
		}, agentsmcp.EINVALID, "sparse", 1},
		{"wrong dimension", func(n int, req fakeRequest, w http.ResponseWriter) { pineconeAnswer(768)(n, req, w) },
			agentsmcp.EINTERNAL, "768 dimensions for text 0; expected 1024", 1},
	}
	for _, tt := range tests {
		f := newFake(t, tt.answer)
		p := newTestPinecone(t, f, Config{MaxRetries: 2})
		_, err := p.Embed(context.Background(), []string{"x"})
		if got := agentsmcp.ErrorCode(err); got != tt.code {
			t.Errorf("%s: code %q, want %q (%v)", tt.name, got, tt.code, err)
		}
		if !strings.Contains(agentsmcp.ErrorMessage(err), tt.inMsg) {
			t.Errorf("%s: message %q lacks %q", tt.name, agentsmcp.ErrorMessage(err), tt.inMsg)
		}
		if n := len(f.requests()); n != tt.calls {
			t.Errorf("%s: %d requests, want %d", tt.name, n, tt.calls)
		}
		if err != nil && strings.Contains(err.Error(), pineconeTestKey) {
			t.Errorf("%s: the API key leaked: %v", tt.name, err)
		}
	}
}

func TestPineconeUnreachable(t *testing.T) {
	f := newFake(t, pineconeAnswer(3))
	url := f.URL
	f.Close() // nothing listens there any more
	p, err := NewPinecone(Config{BaseURL: url, APIKey: pineconeTestKey, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	p.r.backoff = time.Millisecond
	_, err = p.Embed(context.Background(), []string{"x"})
	if agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE || !strings.Contains(agentsmcp.ErrorMessage(err), "network error after 2 attempts") {
		t.Errorf("connection refused: %v; want EUNAVAILABLE after 2 attempts", err)
	}
}

func TestPineconeConfig(t *testing.T) {
	if _, err := NewPinecone(Config{}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "API key is required") {
		t.Errorf("no key: %v", err)
	}
	p, err := NewPinecone(Config{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if p.r.baseURL != PineconeBaseURL || p.r.batchSize != 96 || p.inputType != "passage" || p.ForQueries().inputType != "query" {
		t.Errorf("defaults: %q batch %d type %q", p.r.baseURL, p.r.batchSize, p.inputType)
	}
}

// TestPineconeLive embeds through the real inference API when
// PINECONE_API_KEY is set.
func TestPineconeLive(t *testing.T) {
	key := os.Getenv("PINECONE_API_KEY")
	if key == "" {
		t.Skip("PINECONE_API_KEY not set: skipping the live Pinecone inference test (the client is tested against a fake)")
	}
	p, err := NewPinecone(Config{APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	docs, err := p.Embed(ctx, []string{"list the files in a directory", "send an email to the team"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.ForQueries().Embed(ctx, []string{"which files are in this folder?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || len(q) != 1 || len(q[0]) != 1024 || p.Dimensions() != 1024 {
		t.Fatalf("shapes %d×%d, %d×%d", len(docs), len(docs[0]), len(q), len(q[0]))
	}
	cos := func(a, b []float32) float64 {
		var d, na, nb float64
		for i := range a {
			d += float64(a[i]) * float64(b[i])
			na += float64(a[i]) * float64(a[i])
			nb += float64(b[i]) * float64(b[i])
		}
		return d / math.Sqrt(na*nb)
	}
	if cos(q[0], docs[0]) <= cos(q[0], docs[1]) {
		t.Errorf("the query is closer to the unrelated passage: %.3f vs %.3f", cos(q[0], docs[0]), cos(q[0], docs[1]))
	}
}
