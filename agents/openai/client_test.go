package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/openai"
	"github.com/agents-mcp/agents-mcp/agents/openai/openaitest"
)

const testKey = "sk-test-secret-4711"

func newClient(t *testing.T, fs *openaitest.FakeServer, edit func(*openai.Config)) *openai.Client {
	t.Helper()
	cfg := openai.Config{BaseURL: fs.URL, APIKey: testKey, Model: "test-model", Timeout: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func userRequest(text string) *agentsmcp.LLMRequest {
	return &agentsmcp.LLMRequest{Messages: []agentsmcp.LLMMessage{{Role: agentsmcp.LLMRoleUser, Content: text}}, Purpose: "test"}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := agentsmcp.ErrorCode(err); got != code {
		t.Fatalf("error code = %q, want %q (err: %v)", got, code, err)
	}
}

func TestCompleteJSONModeRequestAndUsage(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	fs.Enqueue(openaitest.Text(`{"ok":true}`, 12, 5), openaitest.Text("plain", 7, 3))
	c := newClient(t, fs, nil)

	res, err := c.Complete(context.Background(), &agentsmcp.LLMRequest{
		System: "You are a planner.",
		Messages: []agentsmcp.LLMMessage{
			{Role: agentsmcp.LLMRoleUser, Content: "plan it"},
			{Role: agentsmcp.LLMRoleAssistant, Content: "which files?"},
			{Role: agentsmcp.LLMRoleUser, Content: "all of them"},
		},
		JSON:      true,
		MaxTokens: 200,
		Purpose:   "plan",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := agentsmcp.LLMResponse{Text: `{"ok":true}`, Model: "test-model", Backend: "openai", Usage: agentsmcp.LLMUsage{InputTokens: 12, OutputTokens: 5}}
	if *res != want {
		t.Errorf("response = %+v, want %+v", *res, want)
	}

	reqs := fs.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "test-model" || r.ResponseFormat != "json_object" || r.MaxTokens != 200 || r.MaxCompletionTokens != 0 {
		t.Errorf("request model=%q response_format=%q max_tokens=%d max_completion_tokens=%d", r.Model, r.ResponseFormat, r.MaxTokens, r.MaxCompletionTokens)
	}
	if r.Authorization != "Bearer "+testKey {
		t.Errorf("Authorization = %q", r.Authorization)
	}
	wantMsgs := []openaitest.Message{
		{Role: "system", Content: "You are a planner."},
		{Role: "user", Content: "plan it"},
		{Role: "assistant", Content: "which files?"},
		{Role: "user", Content: "all of them"},
	}
	if len(r.Messages) != len(wantMsgs) {
		t.Fatalf("messages = %+v, want %+v", r.Messages, wantMsgs)
	}
	for i := range wantMsgs {
		if r.Messages[i] != wantMsgs[i] {
			t.Errorf("message %d = %+v, want %+v", i, r.Messages[i], wantMsgs[i])
		}
	}

	// Without JSON or MaxTokens, neither field is sent at all.
	if _, err := c.Complete(context.Background(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	body := string(fs.Requests()[1].Body)
	if strings.Contains(body, "response_format") || strings.Contains(body, "max_tokens") || strings.Contains(body, "max_completion_tokens") {
		t.Errorf("plain request sent optional fields: %s", body)
	}
	if got := c.Usage(); got != (agentsmcp.LLMUsage{InputTokens: 19, OutputTokens: 8}) {
		t.Errorf("cumulative usage = %+v", got)
	}
	if c.Requests() != 2 {
		t.Errorf("Requests() = %d, want 2", c.Requests())
	}
	if c.Name() != "openai" {
		t.Errorf("Name() = %q", c.Name())
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	limited := openaitest.Error(http.StatusTooManyRequests, "rate limited")
	limited.RetryAfter = "1"
	fs.Enqueue(limited, openaitest.Text("ok", 1, 1))
	c := newClient(t, fs, nil)

	start := time.Now()
	res, err := c.Complete(context.Background(), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 900*time.Millisecond {
		t.Errorf("retried after %s, before the 1s Retry-After", elapsed)
	}
	if res.Text != "ok" || len(fs.Requests()) != 2 {
		t.Errorf("text %q after %d requests, want ok after 2", res.Text, len(fs.Requests()))
	}
}

func serverError() openaitest.Reply {
	r := openaitest.Error(http.StatusInternalServerError, "the model crashed")
	r.RetryAfter = "0" // keeps the test fast; backoff would add seconds
	return r
}

func TestRetriesServerErrors(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	fs.Enqueue(serverError(), serverError(), openaitest.Text("third time", 4, 2))
	c := newClient(t, fs, nil)

	res, err := c.Complete(context.Background(), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "third time" || len(fs.Requests()) != 3 {
		t.Errorf("text %q after %d requests", res.Text, len(fs.Requests()))
	}
	if c.Usage() != res.Usage || c.Requests() != 1 {
		t.Errorf("usage %+v over %d requests; failed attempts must not count", c.Usage(), c.Requests())
	}
}

func TestPersistentServerErrorIsUnavailable(t *testing.T) {
	for _, tc := range []struct {
		retries, requests int
	}{{0, 4}, {1, 2}, {-1, 1}} {
		fs := openaitest.NewFakeServer(t)
		fs.Handler = func(openaitest.ChatRequest) openaitest.Reply { return serverError() }
		c := newClient(t, fs, func(cfg *openai.Config) { cfg.MaxRetries = tc.retries })

		_, err := c.Complete(context.Background(), userRequest("hi"))
		wantCode(t, err, agentsmcp.EUNAVAILABLE)
		if !strings.Contains(err.Error(), "the model crashed") {
			t.Errorf("error does not quote the server: %v", err)
		}
		if n := len(fs.Requests()); n != tc.requests {
			t.Errorf("MaxRetries %d: %d requests, want %d", tc.retries, n, tc.requests)
		}
	}
}

func TestUnauthorizedHidesKey(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		fs := openaitest.NewFakeServer(t)
		fs.Enqueue(openaitest.Error(status, "Incorrect API key provided: "+testKey))
		c := newClient(t, fs, nil)

		_, err := c.Complete(context.Background(), userRequest("hi"))
		wantCode(t, err, agentsmcp.EUNAUTHORIZED)
		if strings.Contains(err.Error(), testKey) || strings.Contains(agentsmcp.ErrorMessage(err), testKey) {
			t.Errorf("error holds the API key: %v", err)
		}
		if n := len(fs.Requests()); n != 1 {
			t.Errorf("HTTP %d was retried: %d requests", status, n)
		}
	}
}

func TestBadRequestIsInvalid(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	long := "context length exceeded by key " + testKey + " " + strings.Repeat("very long ", 100)
	fs.Enqueue(
		openaitest.Error(http.StatusBadRequest, long),
		openaitest.Reply{Status: http.StatusUnprocessableEntity, Body: "model 'nope' not found"},    // plain text, as some servers send
		openaitest.Reply{Status: http.StatusNotFound, Body: `{"error":"model \"nope\" not found"}`}, // Ollama's shape
	)
	c := newClient(t, fs, nil)

	_, err := c.Complete(context.Background(), userRequest("hi"))
	wantCode(t, err, agentsmcp.EINVALID)
	msg := agentsmcp.ErrorMessage(err)
	if !strings.Contains(msg, "HTTP 400: context length exceeded") || strings.Contains(msg, testKey) || len(msg) > 450 {
		t.Errorf("message (%d bytes) = %q", len(msg), msg)
	}
	for _, want := range []string{"HTTP 422: model 'nope' not found", `HTTP 404: model "nope" not found`} {
		_, err = c.Complete(context.Background(), userRequest("hi"))
		wantCode(t, err, agentsmcp.EINVALID)
		if !strings.Contains(agentsmcp.ErrorMessage(err), want) {
			t.Errorf("message = %q, want it to contain %q", agentsmcp.ErrorMessage(err), want)
		}
	}
	if n := len(fs.Requests()); n != 3 {
		t.Errorf("4xx were retried: %d requests for 3 calls", n)
	}
}

func TestResponseFormatFallback(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	fs.RejectResponseFormat = true
	fs.Enqueue(openaitest.Text(`{"a":1}`, 1, 1), openaitest.Text(`{"b":2}`, 1, 1))
	c := newClient(t, fs, nil)
	req := userRequest("answer in JSON")
	req.JSON = true

	for i, want := range []string{`{"a":1}`, `{"b":2}`} {
		res, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if res.Text != want {
			t.Errorf("call %d: text %q, want %q", i, res.Text, want)
		}
	}
	var formats []string
	for _, r := range fs.Requests() {
		formats = append(formats, r.ResponseFormat)
	}
	if got := strings.Join(formats, ","); got != "json_object,," {
		t.Errorf("response_format per request = %q, want json_object then none twice", got)
	}
}

func TestUnrelatedBadRequestKeepsJSONMode(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	tooLong := openaitest.Error(http.StatusBadRequest, "prompt too long")
	fs.Enqueue(tooLong, tooLong, openaitest.Text("{}", 1, 1))
	c := newClient(t, fs, nil)
	req := userRequest("answer in JSON")
	req.JSON = true

	_, err := c.Complete(context.Background(), req)
	wantCode(t, err, agentsmcp.EINVALID)
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	reqs := fs.Requests()
	if len(reqs) != 3 || reqs[1].ResponseFormat != "" || reqs[2].ResponseFormat != "json_object" {
		t.Errorf("requests: %d, formats %q %q; the second call must send response_format again", len(reqs), reqs[1].ResponseFormat, reqs[len(reqs)-1].ResponseFormat)
	}
}

func TestTimeoutIsUnavailable(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	fs.Enqueue(openaitest.Reply{Text: "late", Delay: 10 * time.Second})
	c := newClient(t, fs, func(cfg *openai.Config) { cfg.Timeout = 200 * time.Millisecond })

	start := time.Now()
	_, err := c.Complete(context.Background(), userRequest("hi"))
	wantCode(t, err, agentsmcp.EUNAVAILABLE)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error does not wrap DeadlineExceeded: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("took %s with a 200ms timeout", elapsed)
	}
}

func TestCallerCancellation(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	fs.Enqueue(openaitest.Reply{Text: "late", Delay: 10 * time.Second})
	c := newClient(t, fs, nil)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Complete(ctx, userRequest("hi"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("returned %s after the cancellation", elapsed)
	}
}

func TestConcurrentUsage(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	fs.Handler = func(req openaitest.ChatRequest) openaitest.Reply {
		return openaitest.Text("echo: "+req.Messages[0].Content, 3, 2)
	}
	c := newClient(t, fs, nil)

	const workers, calls = 16, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for range workers {
		wg.Go(func() {
			for range calls {
				res, err := c.Complete(context.Background(), userRequest("x"))
				if err == nil && res.Text != "echo: x" {
					err = errors.New("wrong text " + res.Text)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := workers * calls
	if got := c.Usage(); got != (agentsmcp.LLMUsage{InputTokens: 3 * n, OutputTokens: 2 * n}) || c.Requests() != int64(n) {
		t.Errorf("usage %+v over %d requests after %d calls", got, c.Requests(), n)
	}
}

func TestNoChoicesIsUnavailable(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	fs.Enqueue(openaitest.Reply{Status: http.StatusOK, Body: `{"id":"x","object":"chat.completion","model":"m","choices":[]}`})
	c := newClient(t, fs, nil)

	_, err := c.Complete(context.Background(), userRequest("hi"))
	wantCode(t, err, agentsmcp.EUNAVAILABLE)
	if c.Requests() != 0 {
		t.Errorf("an answer without choices was counted")
	}
}

func TestUnreachableServerHidesCredentials(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	host := dead.Listener.Addr().String()
	dead.Close()
	c, err := openai.New(openai.Config{
		BaseURL:    "http://someone:hunter2@" + host + "/v1?api_key=qwerty",
		APIKey:     testKey,
		Model:      "m",
		MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), userRequest("hi"))
	wantCode(t, err, agentsmcp.EUNAVAILABLE)
	for _, secret := range []string{"hunter2", "qwerty", testKey} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error holds %q: %v", secret, err)
		}
	}
	if !strings.Contains(err.Error(), host) {
		t.Errorf("error does not name the server: %v", err)
	}
}

func TestNoAPIKeyNoAuthorization(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	fs := openaitest.NewFakeServer(t)
	fs.Enqueue(openaitest.Text("ok", 1, 1))
	c := newClient(t, fs, func(cfg *openai.Config) { cfg.APIKey = "" })
	if _, err := c.Complete(context.Background(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	if got := fs.Requests()[0].Authorization; got != "" {
		t.Errorf("Authorization = %q without a configured key", got)
	}
}

// redirectTransport sends every request to target, so that a client
// configured for api.openai.com talks to the fake server.
type redirectTransport struct{ target *url.URL }

func (rt redirectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = rt.target.Scheme, rt.target.Host
	return http.DefaultTransport.RoundTrip(req)
}

func TestOpenAIGetsMaxCompletionTokens(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	fs.Enqueue(openaitest.Text("ok", 1, 1))
	target, _ := url.Parse(fs.URL)
	c := newClient(t, fs, func(cfg *openai.Config) {
		cfg.BaseURL = ""
		cfg.HTTPClient = &http.Client{Transport: redirectTransport{target}}
	})
	req := userRequest("hi")
	req.MaxTokens = 64
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if r := fs.Requests()[0]; r.MaxCompletionTokens != 64 || r.MaxTokens != 0 {
		t.Errorf("max_completion_tokens=%d max_tokens=%d, want 64 and none", r.MaxCompletionTokens, r.MaxTokens)
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []openai.Config{
		{BaseURL: "ftp://example.com/v1"},
		{BaseURL: "/v1"},
		{Timeout: -time.Second},
		{Model: "   "},
	} {
		_, err := openai.New(cfg)
		wantCode(t, err, agentsmcp.EINVALID)
	}
	_, err := openai.New(openai.Config{BaseURL: "ftp://someone:hunter2@example.com/v1"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v", err)
	}
	c, err := openai.New(openai.Config{})
	if err != nil || c.Model() != openai.DefaultModel {
		t.Errorf("defaults: %v, model %q", err, c.Model())
	}
}

func TestMalformedRequestSendsNothing(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	c := newClient(t, fs, nil)
	for _, req := range []*agentsmcp.LLMRequest{
		nil,
		{},
		{Messages: []agentsmcp.LLMMessage{{Role: "tool", Content: "x"}}},
	} {
		_, err := c.Complete(context.Background(), req)
		wantCode(t, err, agentsmcp.EINVALID)
	}
	if n := len(fs.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestFakeServerWithoutScriptAnswers500(t *testing.T) {
	fs := openaitest.NewFakeServer(t)
	c := newClient(t, fs, func(cfg *openai.Config) { cfg.MaxRetries = -1 })
	_, err := c.Complete(context.Background(), userRequest("hi"))
	wantCode(t, err, agentsmcp.EUNAVAILABLE)
	if !strings.Contains(err.Error(), "no scripted reply") {
		t.Errorf("error = %v", err)
	}
}
