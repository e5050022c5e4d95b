package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// postJSON sends one JSON request and decodes a 2xx answer into out. A
// non-2xx answer is a [*statusError] carrying the server's message and
// Retry-After; a failure to send or to read the answer is a
// [*transientError]; an answer too large or not JSON is a plain error.
// The API key, when set, goes as a Bearer token unless r.headers says
// otherwise.
func (r *remote) postJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.headers != nil {
		r.headers(req.Header)
	} else if r.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
	}
	res, err := r.client.Do(req)
	if err != nil {
		return &transientError{err}
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		// A read error here loses only the message, not the status.
		data, _ := io.ReadAll(io.LimitReader(res.Body, r.maxError))
		wait, _ := parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
		return &statusError{status: res.StatusCode, retryAfter: wait, message: r.redactString(redact.ServerMessage(data))}
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, r.maxBody+1))
	if err != nil {
		return &transientError{fmt.Errorf("read response: %w", err)}
	}
	if int64(len(data)) > r.maxBody {
		return fmt.Errorf("the response is larger than %d bytes", r.maxBody)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP
// date (RFC 9110 §10.2.3). A date in the past is no wait; anything else
// unreadable is ignored.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		// Capped here so that huge values cannot overflow.
		return time.Duration(min(secs, int64(maxBackoff/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
