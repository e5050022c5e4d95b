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
	// full wakes Run when the queue holds a whole batch. Run does not
	// receive each item as it is added: a goroutine blocked on the queue
	// would be woken (and another thread with it) on every Add, which on
	// the relay's call path was a wake-up per recorder per call. Items
	// wait in the queue instead, for the tick or a full batch, as they
	// waited for them in a batch before.
	full    chan struct{}
	done    chan struct{} // closed when Run returns
	pending atomic.Int64
}

// New returns a batcher; nothing is written until [Batcher.Run].
func New[T any](o Options[T]) *Batcher[T] {
	return &Batcher[T]{o: o, queue: make(chan T, o.QueueSize), flushes: make(chan chan struct{}),
		full: make(chan struct{}, 1), done: make(chan struct{})}
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
		b.wakeIfFull()
		return true
	default:
	}
	if b.o.EnqueueWait > 0 {
		b.wakeIfFull() // a full queue is a full batch too (QueueSize < BatchSize)
		t := time.NewTimer(b.o.EnqueueWait)
		defer t.Stop()
		select {
		case b.queue <- v:
			b.wakeIfFull()
			return true
		case <-t.C:
		}
	}
	b.pending.Add(-1)
	b.o.Drop(1, Full, nil)
	return false
}

// wakeIfFull wakes Run when the queue holds a batch, or is full.
func (b *Batcher[T]) wakeIfFull() {
	if n := len(b.queue); n >= b.o.BatchSize || n == cap(b.queue) {
		select {
		case b.full <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
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
		case <-b.full:
			var stop bool
			if batch, stop = b.writeWhole(wctx, batch, len(b.queue)); stop {
				return batch
			}
			continue
		case <-ticker.C:
			// Everything queued by now; what comes meanwhile waits for
			// the next tick or a full batch.
			var stop bool
			batch, stop = b.writeWhole(wctx, batch, len(b.queue))
			if stop {
				return batch
			}
			if len(batch) == 0 {
				continue
			}
		case done := <-b.flushes:
			// What was queued before the request is in the queue now;
			// write it, and no more, so that a busy queue cannot hold the
			// reader.
			var stop bool
			batch, stop = b.writeWhole(wctx, batch, len(b.queue))
			if !stop && len(batch) > 0 {
				batch = b.write(wctx, batch)
				stop = batch != nil
			}
			close(done)
			if stop {
				return batch
			}
			continue
		}
		if left := b.write(wctx, batch); left != nil {
			return left
		}
		batch = nil
	}
}

// writeWhole takes the next n queued items into batch (the items in hand)
// and writes every whole batch of them; it returns the partial batch left,
// unwritten, or, with stop, what a write left unwritten (Run then stops).
// n bounds it to what was queued when it was called, so that a busy queue
// cannot keep Run from its context and its flush requests.
func (b *Batcher[T]) writeWhole(ctx context.Context, batch []T, n int) (rest []T, stop bool) {
	for {
		held := len(batch)
		batch = b.take(batch, n)
		n -= len(batch) - held
		if len(batch) < b.o.BatchSize {
			return batch, false
		}
		if left := b.write(ctx, batch); left != nil {
			return left, true
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
