package words

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for in, want := range map[string][]string{
		"chat.scheduleMessage": {"chat", "schedule", "message"},
		"add-to-queue":         {"add", "to", "queue"},
		"get_HTTPStatus2":      {"get", "httpstatus2"},
		"  ":                   nil,
	} {
		if got := Split(in); !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}
