package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

const testKey = "sk-test-SECRET-0123456789"

type openAIDatum struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// openAIAnswer is a fake OpenAI success: the embeddings of the request's
// inputs, listed in reverse order, which the API allows since each datum
// carries its index.
func openAIAnswer(dims int) func(int, fakeRequest, http.ResponseWriter) {
	return func(_ int, req fakeRequest, w http.ResponseWriter) {
		in := req.inputs()
		data := make([]openAIDatum, len(in))
		for i, text := range in {
			data[len(in)-1-i] = openAIDatum{Object: "embedding", Index: i, Embedding: vecOf(text, dims)}
		}
		writeJSON(w, 200, map[string]any{"object": "list", "data": data, "model": "fake"})
	}
}

// newTestOpenAI is an OpenAI embedder on f with fast retries.
func newTestOpenAI(t *testing.T, f *fake, cfg Config) *OpenAI {
	t.Helper()
	cfg.BaseURL = f.URL + "/v1"
	cfg.APIKey = testKey
	if cfg.Model == "" {
		cfg.Model = "fake-embed"
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.r.backoff = time.Millisecond
	return o
}

func TestOpenAIEmbed(t *testing.T) {
	f := newFake(t, openAIAnswer(3))
	o := newTestOpenAI(t, f, Config{})
	if o.Dimensions() != 0 || o.ID() != "openai:fake-embed:0" {
		t.Fatalf("before the first call: %d dims, ID %q", o.Dimensions(), o.ID())
	}
	texts := []string{"alpha", "be", "gamma ray"}
	got, err := o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if !reflect.DeepEqual(got[i], vecOf(text, 3)) {
			t.Errorf("vector %d = %v, want %v (the embedding of %q)", i, got[i], vecOf(text, 3), text)
		}
	}
	if o.Dimensions() != 3 || o.ID() != "openai:fake-embed:3" {
		t.Errorf("after the first call: %d dims, ID %q; want 3, openai:fake-embed:3", o.Dimensions(), o.ID())
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/embeddings" {
		t.Errorf("%s %s, want POST /v1/embeddings", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization %q, want the Bearer key", got)
	}
	if r.Body["model"] != "fake-embed" || r.Body["encoding_format"] != "float" || !reflect.DeepEqual(r.inputs(), texts) {
		t.Errorf("body %v", r.Body)
	}
	if _, ok := r.Body["dimensions"]; ok {
		t.Error("dimensions sent although not configured")
	}
}

func TestOpenAIDimensionsParameter(t *testing.T) {
	f := newFake(t, openAIAnswer(4))
	o := newTestOpenAI(t, f, Config{Dimensions: 4})
	if _, err := o.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].Body["dimensions"]; got != 4.0 {
		t.Errorf("dimensions %v, want 4", got)
	}
	if o.ID() != "openai:fake-embed:4" {
		t.Errorf("ID %q", o.ID())
	}
}

func TestOpenAINoAPIKeyNoHeader(t *testing.T) {
	f := newFake(t, openAIAnswer(2))
	o, err := NewOpenAI(Config{BaseURL: f.URL + "/v1", Model: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if h := f.requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent without a key", h)
	}
}

func TestBatching(t *testing.T) {
	f := newFake(t, openAIAnswer(2))
	o := newTestOpenAI(t, f, Config{BatchSize: 4})
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d%s", i, strings.Repeat("!", i))
	}
	got, err := o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var sent []string
	for _, r := range f.requests() {
		sizes = append(sizes, len(r.inputs()))
		sent = append(sent, r.inputs()...)
	}
	if !reflect.DeepEqual(sizes, []int{4, 4, 2}) {
		t.Errorf("request sizes %v, want [4 4 2]", sizes)
	}
	if !reflect.DeepEqual(sent, texts) {
		t.Errorf("texts sent out of order: %v", sent)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, text := range texts {
		if !reflect.DeepEqual(got[i], vecOf(text, 2)) {
			t.Errorf("vector %d belongs to another text", i)
		}
	}
}

func TestEmptyInput(t *testing.T) {
	f := newFake(t, openAIAnswer(2))
	o := newTestOpenAI(t, f, Config{})
	for _, in := range [][]string{nil, {}} {
		got, err := o.Embed(context.Background(), in)
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("Embed(%v) = %v, %v; want empty, nil", in, got, err)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests for no texts", n)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	date := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name   string
		header string
		check  func(time.Duration) bool
		want   string
	}{
		{"seconds", "7", func(d time.Duration) bool { return d == 7*time.Second }, "7s"},
		{"http date", date, func(d time.Duration) bool { return d > 18*time.Second && d <= 20*time.Second }, "≈20s"},
		{"capped", "3600", func(d time.Duration) bool { return d == maxBackoff }, "30s"},
		{"absent: backoff", "", func(d time.Duration) bool { return d >= time.Millisecond/2 && d <= time.Millisecond }, "0.5-1ms (jitter)"},
	}
	for _, tt := range tests {
		success := openAIAnswer(2)
		f := newFake(t, func(n int, req fakeRequest, w http.ResponseWriter) {
			if n == 0 {
				if tt.header != "" {
					w.Header().Set("Retry-After", tt.header)
				}
				writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "Rate limit reached"}})
				return
			}
			success(n, req, w)
		})
		o := newTestOpenAI(t, f, Config{})
		waits := sleeps(o.r)
		got, err := o.Embed(context.Background(), []string{"a"})
		if err != nil || len(got) != 1 {
			t.Errorf("%s: %v, %v", tt.name, got, err)
			continue
		}
		if n := len(f.requests()); n != 2 {
			t.Errorf("%s: %d requests, want 2", tt.name, n)
		}
		if len(*waits) != 1 || !tt.check((*waits)[0]) {
			t.Errorf("%s: waited %v, want one wait of %s", tt.name, *waits, tt.want)
		}
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	for _, status := range []int{500, 502, 503, 408, 429} {
		f := newFake(t, func(_ int, _ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, status, map[string]any{"error": map[string]any{"message": "boom " + testKey}})
		})
		o := newTestOpenAI(t, f, Config{MaxRetries: 2})
		waits := sleeps(o.r)
		_, err := o.Embed(context.Background(), []string{"a"})
		if agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
			t.Errorf("HTTP %d: %v, want EUNAVAILABLE", status, err)
		}
		if n := len(f.requests()); n != 3 {
			t.Errorf("HTTP %d: %d requests, want 3 (1 + 2 retries)", status, n)
		}
		if len(*waits) != 2 || !within((*waits)[0], time.Millisecond/2, time.Millisecond) || !within((*waits)[1], time.Millisecond, 2*time.Millisecond) {
			t.Errorf("HTTP %d: waits %v, want 2 jittered in [0.5ms, 1ms] and [1ms, 2ms]", status, *waits)
		}
		msg := agentsmcp.ErrorMessage(err)
		if !strings.Contains(msg, fmt.Sprintf("HTTP %d after 3 attempts", status)) {
			t.Errorf("HTTP %d: message %q", status, msg)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("HTTP %d: the API key leaked: %v", status, err)
		}
	}
}

func TestClientErrorsNotRetried(t *testing.T) {
	tests := []struct {
		status int
		body   any
		code   string
		inMsg  string
	}{
		{400, map[string]any{"error": map[string]any{"message": "'$.input' is invalid. Please check the API reference"}}, agentsmcp.EINVALID, "'$.input' is invalid"},
		{404, map[string]any{"error": map[string]any{"message": "The model `nope` does not exist"}}, agentsmcp.EINVALID, "does not exist"},
		{422, "unprocessable " + testKey, agentsmcp.EINVALID, "unprocessable [redacted]"},
		{401, map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + testKey}}, agentsmcp.EUNAUTHORIZED, "refused the API key (HTTP 401)"},
		{403, map[string]any{"error": "forbidden"}, agentsmcp.EUNAUTHORIZED, "HTTP 403"},
	}
	for _, tt := range tests {
		f := newFake(t, func(_ int, _ fakeRequest, w http.ResponseWriter) { writeJSON(w, tt.status, tt.body) })
		o := newTestOpenAI(t, f, Config{})
		waits := sleeps(o.r)
		_, err := o.Embed(context.Background(), []string{"a"})
		if got := agentsmcp.ErrorCode(err); got != tt.code {
			t.Errorf("HTTP %d: code %q, want %q (%v)", tt.status, got, tt.code, err)
		}
		if n := len(f.requests()); n != 1 || len(*waits) != 0 {
			t.Errorf("HTTP %d: %d requests, %d waits; want 1, 0", tt.status, n, len(*waits))
		}
		if msg := agentsmcp.ErrorMessage(err); !strings.Contains(msg, tt.inMsg) {
			t.Errorf("HTTP %d: message %q lacks %q", tt.status, msg, tt.inMsg)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("HTTP %d: the API key leaked: %v", tt.status, err)
		}
	}
}

func TestBadAnswers(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		answer func(fakeRequest, http.ResponseWriter)
		want   string
	}{
		{"wrong dimension", Config{Dimensions: 4}, func(req fakeRequest, w http.ResponseWriter) { openAIAnswer(3)(0, req, w) },
			"3 dimensions for text 0; expected 4"},
		{"mixed dimensions", Config{}, func(_ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"data": []openAIDatum{{Index: 0, Embedding: []float32{1, 2}}, {Index: 1, Embedding: []float32{1, 2, 3}}}})
		}, "3 dimensions for text 1; expected 2"},
		{"too few", Config{}, func(_ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"data": []openAIDatum{{Index: 0, Embedding: []float32{1, 2}}}})
		}, "1 vectors for 2 texts"},
		{"too many", Config{}, func(_ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"data": []openAIDatum{{Index: 0, Embedding: []float32{1}}, {Index: 1, Embedding: []float32{1}}, {Index: 2, Embedding: []float32{1}}}})
		}, "3 vectors for 2 texts"},
		{"duplicate index", Config{}, func(_ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"data": []openAIDatum{{Index: 1, Embedding: []float32{1}}, {Index: 1, Embedding: []float32{1}}}})
		}, "index 1 twice"},
		{"empty vector", Config{}, func(_ fakeRequest, w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"data": []openAIDatum{{Index: 0}, {Index: 1}}})
		}, "0 dimensions"},
		{"not json", Config{}, func(_ fakeRequest, w http.ResponseWriter) {
			w.WriteHeader(200)
			fmt.Fprint(w, "<html>proxy login</html>")
		}, "decode response"},
	}
	for _, tt := range tests {
		f := newFake(t, func(_ int, req fakeRequest, w http.ResponseWriter) { tt.answer(req, w) })
		o := newTestOpenAI(t, f, tt.cfg)
		_, err := o.Embed(context.Background(), []string{"a", "b"})
		if err == nil || agentsmcp.ErrorCode(err) != agentsmcp.EINTERNAL || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want EINTERNAL mentioning %q", tt.name, err, tt.want)
		}
		if n := len(f.requests()); n != 1 {
			t.Errorf("%s: %d requests; a bad answer must not be retried", tt.name, n)
		}
	}
}

func TestResponseSizeLimit(t *testing.T) {
	f := newFake(t, openAIAnswer(64))
	o := newTestOpenAI(t, f, Config{})
	o.r.maxBody = 100
	_, err := o.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("oversized answer: %v", err)
	}
}

func TestHangingServerTimesOut(t *testing.T) {
	f := newFake(t, func(_ int, req fakeRequest, w http.ResponseWriter) {
		// Hold the request until the client gives up.
		select {
		case <-req.Ctx.Done():
		case <-time.After(5 * time.Second):
		}
	})
	o := newTestOpenAI(t, f, Config{Timeout: 100 * time.Millisecond, MaxRetries: 1})
	start := time.Now()
	_, err := o.Embed(context.Background(), []string{"a"})
	elapsed := time.Since(start)
	if agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging server: %v; want EUNAVAILABLE wrapping DeadlineExceeded", err)
	}
	if !strings.Contains(agentsmcp.ErrorMessage(err), "timeout after 2 attempts") {
		t.Errorf("message %q", agentsmcp.ErrorMessage(err))
	}
	if elapsed < 200*time.Millisecond || elapsed > 2*time.Second {
		t.Errorf("returned after %v; want two 100ms attempts", elapsed)
	}
}

func TestCancellationStopsRetries(t *testing.T) {
	f := newFake(t, func(_ int, _ fakeRequest, w http.ResponseWriter) { writeJSON(w, 503, "overloaded") })
	o := newTestOpenAI(t, f, Config{})
	o.r.backoff = 20 * time.Second // real waits: cancellation must cut them short
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := o.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("cancellation took %v", elapsed)
	}
	if n := len(f.requests()); n > 2 {
		t.Errorf("%d requests after cancellation", n)
	}
}

func TestDeadlineShorterThanRetryAfter(t *testing.T) {
	f := newFake(t, func(_ int, _ fakeRequest, w http.ResponseWriter) {
		w.Header().Set("Retry-After", "20")
		writeJSON(w, 429, "slow down")
	})
	o := newTestOpenAI(t, f, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := o.Embed(ctx, []string{"a"})
	if agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Errorf("got %v, want EUNAVAILABLE at once", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("waited %v for a retry the deadline did not allow", elapsed)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, cfg := range []Config{
		{BaseURL: "api.openai.com/v1"},
		{BaseURL: "ftp://x/v1"},
		{BaseURL: "http://"},
		{Dimensions: -1},
		{BatchSize: -5},
		{Timeout: -time.Second},
		{Model: "  "},
	} {
		if _, err := NewOpenAI(cfg); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("NewOpenAI(%+v) = %v, want EINVALID", cfg, err)
		}
	}
	_, err := NewOpenAI(Config{BaseURL: "ftp://user:hunter2@x/v1"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("credentials in a bad base URL quoted: %v", err)
	}
}

func TestConcurrentEmbed(t *testing.T) {
	f := newFake(t, openAIAnswer(5))
	o := newTestOpenAI(t, f, Config{BatchSize: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts := []string{fmt.Sprint("a", i), fmt.Sprint("bb", i), fmt.Sprint("ccc", i), fmt.Sprint("d", i)}
			vs, err := o.Embed(context.Background(), texts)
			if err == nil && !reflect.DeepEqual(vs[3], vecOf(texts[3], 5)) {
				err = fmt.Errorf("goroutine %d got another text's vector", i)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if o.Dimensions() != 5 {
		t.Errorf("learned %d dims, want 5", o.Dimensions())
	}
}

// within reports whether d is in [lo, hi].
func within(d, lo, hi time.Duration) bool { return d >= lo && d <= hi }
