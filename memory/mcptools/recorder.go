package mcptools

import (
	"context"
	"log/slog"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Recorder feeds tool performance from observed calls without slowing them
// down: Record queues a call and returns at once, and Run writes the queue
// to the store. When the store falls behind by more than the queue holds,
// calls are dropped rather than delaying callers: tool performance is a
// statistic, and a lost sample costs less than a slower call.
type Recorder struct {
	store  agentsmcp.ToolPerformanceService
	queue  chan agentsmcp.ToolCall
	logger *slog.Logger
}

// NewRecorder returns a recorder with room for queue pending calls.
func NewRecorder(store agentsmcp.ToolPerformanceService, queue int, logger *slog.Logger) *Recorder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Recorder{store: store, queue: make(chan agentsmcp.ToolCall, max(queue, 1)), logger: logger}
}

// Record queues one finished call; it never blocks.
func (r *Recorder) Record(tool string, d time.Duration, errText string) {
	select {
	case r.queue <- agentsmcp.ToolCall{Tool: tool, Duration: d, Error: errText, At: time.Now()}:
	default: // the queue is full: dropped (see Recorder)
	}
}

// Run writes queued calls until ctx ends, then writes what is still queued,
// each write bounded by a timeout so a stalled store cannot hold shutdown.
func (r *Recorder) Run(ctx context.Context) {
	write := func(c agentsmcp.ToolCall) {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := r.store.RecordToolCall(wctx, c); err != nil {
			r.logger.Warn("tool performance not recorded", "tool", c.Tool, "err", err)
		}
	}
	for {
		select {
		case c := <-r.queue:
			write(c)
		case <-ctx.Done():
			for {
				select {
				case c := <-r.queue:
					write(c)
				default:
					return
				}
			}
		}
	}
}
