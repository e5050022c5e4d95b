package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// toolSeriesKey names the series of a tool call: its tool and source
// labels.
type toolSeriesKey struct{ tool, source string }

// toolSeries are the series a successful call of a tool from a source
// moves, looked up once: a vector's WithLabelValues hashes and checks its
// label values and takes the vector's lock on every call, which was most
// of ObserveToolCall's cost. Failed calls, rare, still go through the
// vectors, so that their series appear on the first failure, as before.
type toolSeries struct {
	ok       prometheus.Counter
	duration prometheus.Observer
}

// toolSeriesCache holds a toolSeries per key. It grows as the vectors do
// (one entry per tool and source label pair, and the tool labels are
// bounded by MaxToolLabels), and never holds a series the vectors do not.
type toolSeriesCache struct{ m sync.Map }

// of returns the series of key, creating them in m's vectors on first use.
func (c *toolSeriesCache) of(m *Metrics, key toolSeriesKey) *toolSeries {
	if s, ok := c.m.Load(key); ok {
		return s.(*toolSeries)
	}
	s := &toolSeries{
		ok:       m.toolCalls.WithLabelValues(key.tool, key.source, OutcomeOK),
		duration: m.toolDuration.WithLabelValues(key.tool),
	}
	actual, _ := c.m.LoadOrStore(key, s)
	return actual.(*toolSeries)
}

// isLabelName reports whether s is 1 to 64 bytes of ASCII letters (upper
// case only if upper is true), digits, '_' and '-': the pattern of tool
// names (agentsmcp.ToolNamePattern, with upper) and of sources
// (sourcePattern), checked without a regexp on every call.
func isLabelName(s string, upper bool) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == '-':
		case upper && 'A' <= c && c <= 'Z':
		default:
			return false
		}
	}
	return true
}
