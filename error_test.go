package agentsmcp

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRedactError(t *testing.T) {
	const key = "sk-abc123"
	sentinel := errors.New("schema too new")
	if RedactError(nil, key) != nil {
		t.Error("nil error not kept nil")
	}

	clean := fmt.Errorf("prepare: %w", sentinel)
	if got := RedactError(clean, key); got != clean {
		t.Errorf("an error without secrets was replaced: %v", got)
	}

	plain := fmt.Errorf("call %s: %w", key, sentinel)
	got := RedactError(plain, key)
	if got.Error() != "call [redacted]: schema too new" || ErrorCode(got) != EINTERNAL {
		t.Errorf("plain error: %q (code %s)", got, ErrorCode(got))
	}

	app := fmt.Errorf("%w: %w", Errorf(EUNAVAILABLE, "service at https://%s@api.example down", key), sentinel)
	got = RedactError(app, key)
	if strings.Contains(got.Error(), key) || ErrorCode(got) != EUNAVAILABLE {
		t.Errorf("application error: %q (code %s)", got, ErrorCode(got))
	}
	if msg := ErrorMessage(got); msg != "service at https://xxxxx@api.example down" {
		t.Errorf("application message: %q", msg)
	}
}
