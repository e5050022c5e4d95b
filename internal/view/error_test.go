package view_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/view"
)

func TestError(t *testing.T) {
	const key = "sk-abc123"
	sentinel := errors.New("schema too new")
	if view.Error(nil, key) != nil {
		t.Error("nil error not kept nil")
	}

	clean := fmt.Errorf("prepare: %w", sentinel)
	if got := view.Error(clean, key); got != clean {
		t.Errorf("an error without secrets was replaced: %v", got)
	}

	plain := fmt.Errorf("call %s: %w", key, sentinel)
	got := view.Error(plain, key)
	if got.Error() != "call [redacted]: schema too new" || agentsmcp.ErrorCode(got) != agentsmcp.EINTERNAL {
		t.Errorf("plain error: %q (code %s)", got, agentsmcp.ErrorCode(got))
	}

	app := fmt.Errorf("%w: %w", agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "service at https://%s@api.example down", key), sentinel)
	got = view.Error(app, key)
	if strings.Contains(got.Error(), key) || agentsmcp.ErrorCode(got) != agentsmcp.EUNAVAILABLE {
		t.Errorf("application error: %q (code %s)", got, agentsmcp.ErrorCode(got))
	}
	if msg := agentsmcp.ErrorMessage(got); msg != "service at https://xxxxx@api.example down" {
		t.Errorf("application message: %q", msg)
	}
}
