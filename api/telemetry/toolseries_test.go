package telemetry

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// TestIsLabelNameAgreesWithThePatterns: the byte check of tool and source
// labels accepts exactly what agentsmcp.ToolNamePattern and the source
// pattern it replaced accept.
func TestIsLabelNameAgreesWithThePatterns(t *testing.T) {
	source := regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	cases := []string{"", "a", "A", "local", "go__echo", "Up-1_x", "with space", "é", "a.b", "a/b", "a\n",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "ZZ", "z\x00"}
	alphabet := []byte("aZ09_-.é \x00/")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(70))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := isLabelName(s, true), agentsmcp.ToolNamePattern.MatchString(s); got != want {
			t.Errorf("tool %q: %v, the pattern says %v", s, got, want)
		}
		if got, want := isLabelName(s, false), source.MatchString(s); got != want {
			t.Errorf("source %q: %v, the pattern says %v", s, got, want)
		}
	}
}

// TestObserveToolCallSeries: successful calls move the cached series,
// which are the vectors' own, and a failure's series appear only with a
// failure.
func TestObserveToolCallSeries(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	for range 3 {
		m.ObserveToolCall(ToolCall{Tool: "go__echo", Source: "go", Duration: time.Millisecond})
	}
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_tool_calls_total{outcome="ok",source="go",tool="go__echo"}`:    3,
		`agents_mcp_tool_calls_total{outcome="error",source="go",tool="go__echo"}`: -1,
		`agents_mcp_tool_call_errors_total{source="go",tool="go__echo"}`:           -1,
		`agents_mcp_tool_call_duration_seconds_count{tool="go__echo"}`:             3,
	})
	m.ObserveToolCall(ToolCall{Tool: "go__echo", Source: "go", Duration: time.Millisecond, Failed: true})
	m.ObserveToolCall(ToolCall{Tool: "go__echo", Source: "go", Duration: time.Millisecond})
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_tool_calls_total{outcome="ok",source="go",tool="go__echo"}`:    4,
		`agents_mcp_tool_calls_total{outcome="error",source="go",tool="go__echo"}`: 1,
		`agents_mcp_tool_call_errors_total{source="go",tool="go__echo"}`:           1,
		`agents_mcp_tool_call_duration_seconds_count{tool="go__echo"}`:             5,
	})
}

// BenchmarkObserveToolCall measures counting one successful call of a tool
// whose series exist, as every relayed call does.
func BenchmarkObserveToolCall(b *testing.B) {
	m := NewMetrics(MetricsOptions{})
	c := ToolCall{Tool: "go__echo", Source: "go", Duration: 300 * time.Microsecond}
	m.ObserveToolCall(c)
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveToolCall(c)
	}
}
