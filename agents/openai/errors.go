package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/openai/openai-go/v3/option"
)

// Error bodies are only quoted, so a little is plenty; the quote itself is
// cut to redact.MaxQuotedMessageBytes.
const maxErrorBytes = 64 << 10

// attempts is what one library call's HTTP attempts saw. The library's
// own error keeps the status but decodes only OpenAI-shaped bodies; this
// keeps every server's message (Ollama's {"error": "text"}, plain text).
type attempts struct {
	count   int
	status  int    // of the last attempt; 0 when it got no answer
	message string // the last attempt's error message, trimmed, key removed
}

// record is an option.Middleware; the library runs attempts one after
// the other, so no lock is needed.
func (a *attempts) record(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	a.count++
	a.status, a.message = 0, ""
	res, err := next(req)
	if err != nil || res.StatusCode < 400 {
		return res, err
	}
	// A read error here loses only the message, not the status.
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBytes))
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	a.status = res.StatusCode
	a.message = redact.ServerMessage(body)
	return res, nil
}

// mapError turns a failed call into an application error. Library and
// transport errors are described, never wrapped: their text may hold the
// request URL with its credentials.
func (c *Client) mapError(ctx context.Context, err error, a attempts) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", c.name, context.Cause(ctx))
	}
	msg := c.scrub(a.message)
	switch s := a.status; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		// The server's text may echo part of the key; it is not quoted.
		return agentsmcp.Errorf(agentsmcp.EUNAUTHORIZED, "%s: the server refused the API key (HTTP %d)", c.name, s)
	case s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500:
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: the server is unavailable after %s (%s); try again later", c.name, attemptsText(a.count), statusText(s, msg))
	case s >= 400:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s: the server refused the request (%s)", c.name, statusText(s, msg))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		app := agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: no answer within %s; try again later", c.name, c.timeout)
		return fmt.Errorf("%w: %w", app, context.DeadlineExceeded)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// url.Error's own text starts with the URL; its cause does not.
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: cannot reach the server after %s (%s); try again later", c.name, attemptsText(a.count), c.scrub(redact.QuoteMessage(ue.Err.Error())))
	}
	return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: the server's answer is unusable (%s)", c.name, c.scrub(redact.QuoteMessage(err.Error())))
}

func attemptsText(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

func statusText(status int, msg string) string {
	if msg == "" {
		return fmt.Sprintf("HTTP %d", status)
	}
	return fmt.Sprintf("HTTP %d: %s", status, msg)
}

// scrub removes the API key and URL credentials from text quoted from
// elsewhere.
func (c *Client) scrub(s string) string { return redact.Message(s, c.apiKey) }
