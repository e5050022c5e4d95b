package view

import (
	"errors"
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// Error is [redact.Message] for an error: err itself when nothing is
// redacted (its chain intact), else a flat error keeping the code of the
// first [*agentsmcp.Error]; nil stays nil.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	redacted := redact.Message(text, secrets...)
	if redacted == text {
		return err
	}
	var app *agentsmcp.Error
	if errors.As(err, &app) {
		return fmt.Errorf("%w: %s", agentsmcp.Errorf(app.Code, "%s", redact.Message(app.Message, secrets...)), redacted)
	}
	return errors.New(redacted)
}
