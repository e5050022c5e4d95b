// Package batch is the queue behind the module's recorders (the audit
// trail, tool performance): callers add items without waiting for a
// store, and one goroutine writes them in batches, by size or by time,
// and drains what is queued when it stops.
package batch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Reason says why items were dropped.
type Reason int

const (
	// Full: the queue had no room (after Options.EnqueueWait).
	Full Reason = iota
	// Stopped: the item came after Run had stopped taking items.
	Stopped
	// Unwritten: the final drain ended before the items were written.
	Unwritten
)

// Options configures a [Batcher]. QueueSize, BatchSize and FlushInterval
// must be positive; Write and Drop must be set.
type Options[T any] struct {
	QueueSize, BatchSize int
	// FlushInterval is the longest an item waits for its batch to fill.
	FlushInterval time.Duration
	// EnqueueWait is how long Add waits for room in a full queue before
	// it drops the item; zero drops it at once.
	EnqueueWait time.Duration
	// FinalTimeout bounds the drain when Run's context ends.
	FinalTimeout time.Duration
	// DetachWrites, when set, lets a write under way when Run's context
	// ends finish: Write gets a context that Run's end does not cancel.
	DetachWrites bool
	// Write writes one batch. It returns the items still unwritten when
	// its context ended, nil when it is done with all of them (written or
	// dropped on its own terms); Run stops at a non-nil return.
	Write func(ctx context.Context, batch []T) (left []T)
	// Drop is told of n items lost by the batcher itself.
	Drop func(n int, why Reason, err error)
}

// Batcher queues items and writes them in batches. Start Run once in a
// goroutine, and Add from any goroutine.
type Batcher[T any] struct {
	o     Options[T]
	queue chan T
	// mu is held for reading by Add while it may send to queue, and for
	// writing by Run to set stopped: after that nothing more is queued, so
	// the final drain sees every item that was accepted.
	mu      sync.RWMutex
	stopped bool
	started atomic.Bool
	// flushes carries Flush's requests to Run; each is closed once what
	// was queued before it is written.
	flushes chan chan struct{}
	done    chan struct{} // closed when Run returns
	pending atomic.Int64
}

// New returns a batcher; nothing is written until [Batcher.Run].
func New[T any](o Options[T]) *Batcher[T] {
	return &Batcher[T]{o: o, queue: make(chan T, o.QueueSize), flushes: make(chan chan struct{}), done: make(chan struct{})}
}

// Add queues v. It returns at once while the queue has room, and after at
// most EnqueueWait when it is full; it reports whether v was queued. A
// dropped v is told to Drop.
func (b *Batcher[T]) Add(v T) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.stopped {
		b.o.Drop(1, Stopped, nil)
		return false
	}
	b.pending.Add(1)
	select {
	case b.queue <- v:
		return true
	default:
	}
	if b.o.EnqueueWait > 0 {
		t := time.NewTimer(b.o.EnqueueWait)
		defer t.Stop()
		select {
		case b.queue <- v:
			return true
		case <-t.C:
		}
	}
	b.pending.Add(-1)
	b.o.Drop(1, Full, nil)
	return false
}

// Pending counts the items accepted and not yet done with: queued, or in
// a batch being written.
func (b *Batcher[T]) Pending() int { return int(b.pending.Load()) }

// Flush returns once every item added before it is written (or dropped);
// nil at once after Run has returned, which wrote them. It returns ctx's
// error when ctx ends first, which is as long as it waits for Run to start.
func (b *Batcher[T]) Flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case b.flushes <- done:
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run writes queued items in batches until ctx ends, then stops taking
// items and writes what is queued within FinalTimeout; what is left then
// is told to Drop. Further calls return at once.
func (b *Batcher[T]) Run(ctx context.Context) {
	if !b.started.CompareAndSwap(false, true) {
		return
	}
	defer close(b.done)
	left := b.loop(ctx)
	b.finish(context.WithoutCancel(ctx), left)
}

// loop is Run's main loop; it returns the batch in hand when ctx ends.
func (b *Batcher[T]) loop(ctx context.Context) []T {
	ticker := time.NewTicker(b.o.FlushInterval)
	defer ticker.Stop()
	wctx := ctx
	if b.o.DetachWrites {
		wctx = context.WithoutCancel(ctx)
	}
	var batch []T
	for {
		select {
		case <-ctx.Done():
			return batch
		case v := <-b.queue:
			batch = b.take(append(batch, v), b.o.BatchSize)
			if len(batch) < b.o.BatchSize {
				continue
			}
		case <-ticker.C:
			if len(batch) == 0 {
				continue
			}
		case done := <-b.flushes:
			// What was queued before the request is in the queue now;
			// write it, and no more, so that a busy queue cannot hold the
			// reader.
			for n := len(b.queue); ; {
				held := len(batch)
				batch = b.take(batch, n)
				n -= len(batch) - held
				if len(batch) == 0 {
					break
				}
				if left := b.write(wctx, batch); left != nil {
					close(done)
					return left
				}
				batch = nil
			}
			close(done)
			continue
		}
		if left := b.write(wctx, batch); left != nil {
			return left
		}
		batch = nil
	}
}

// take adds to batch up to n queued items, up to a full batch.
func (b *Batcher[T]) take(batch []T, n int) []T {
	for ; n > 0 && len(batch) < b.o.BatchSize; n-- {
		select {
		case v := <-b.queue:
			batch = append(batch, v)
		default:
			return batch
		}
	}
	return batch
}

// write is Write, counting the items it is done with.
func (b *Batcher[T]) write(ctx context.Context, batch []T) []T {
	left := b.o.Write(ctx, batch)
	b.pending.Add(-int64(len(batch) - len(left)))
	return left
}

// finish stops intake, then writes left and everything queued within
// FinalTimeout; what remains unwritten is told to Drop.
func (b *Batcher[T]) finish(ctx context.Context, left []T) {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, b.o.FinalTimeout)
	defer cancel()
	batch := b.take(left, b.o.BatchSize)
	for len(batch) > 0 {
		if rest := b.write(ctx, batch); rest != nil {
			lost := len(rest) + len(b.queue)
			for len(b.queue) > 0 {
				<-b.queue
			}
			b.pending.Add(-int64(lost))
			b.o.Drop(lost, Unwritten, ctx.Err())
			return
		}
		batch = b.take(nil, b.o.BatchSize)
	}
}

// RateLimit lets one log line through per interval.
type RateLimit struct{ last atomic.Int64 } // unix nanoseconds of the last line

// Allow reports whether a line may be logged now, and if so counts it.
func (l *RateLimit) Allow(interval time.Duration) bool {
	now := time.Now().UnixNano()
	last := l.last.Load()
	if last != 0 && now-last < int64(interval) {
		return false
	}
	return l.last.CompareAndSwap(last, now)
}
