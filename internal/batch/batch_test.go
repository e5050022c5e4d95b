package batch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sink records the batches written and the items dropped.
type sink struct {
	mu      sync.Mutex
	batches [][]int
	dropped map[Reason]int
}

func (s *sink) write(_ context.Context, b []int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, slices.Clone(b))
	return nil
}

func (s *sink) drop(n int, why Reason, _ error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped == nil {
		s.dropped = map[Reason]int{}
	}
	s.dropped[why] += n
}

func (s *sink) sizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n []int
	for _, b := range s.batches {
		n = append(n, len(b))
	}
	return n
}

func (s *sink) items() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Concat(s.batches...)
}

// start runs a batcher of s in the bubble; stop ends Run and waits for it.
func start(t *testing.T, s *sink, o Options[int]) (b *Batcher[int], stop func()) {
	t.Helper()
	if o.Write == nil {
		o.Write = s.write
	}
	o.Drop = s.drop
	b = New(o)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); b.Run(ctx) }()
	return b, func() { cancel(); <-done }
}

func opts(queue, size int, interval time.Duration) Options[int] {
	return Options[int]{QueueSize: queue, BatchSize: size, FlushInterval: interval, FinalTimeout: time.Second}
}

func TestFlushBySize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		b, stop := start(t, s, opts(16, 3, time.Hour))
		defer stop()
		for i := range 5 {
			b.Add(i)
		}
		synctest.Wait()
		if got := s.sizes(); !slices.Equal(got, []int{3}) {
			t.Fatalf("batches %v, want one of 3 (the other 2 wait for the interval)", got)
		}
		if b.Pending() != 2 {
			t.Errorf("Pending = %d, want 2", b.Pending())
		}
	})
}

// TestAddDoesNotWakeRun: an item that does not complete a batch stays in
// the queue until the tick, so that Add wakes no goroutine (on the relay's
// call path that was a wake-up per recorder per call). The item is still
// counted as pending and written at the tick.
func TestAddDoesNotWakeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		b, stop := start(t, s, opts(16, 3, time.Second))
		defer stop()
		synctest.Wait() // Run is waiting
		b.Add(1)
		b.Add(2)
		synctest.Wait()
		if n := len(b.queue); n != 2 {
			t.Fatalf("queue holds %d items after two Adds below a batch, want 2 (Run took them early)", n)
		}
		if b.Pending() != 2 {
			t.Errorf("Pending = %d, want 2", b.Pending())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := s.items(); !slices.Equal(got, []int{1, 2}) {
			t.Fatalf("written %v at the tick, want [1 2]", got)
		}
	})
}

func TestFlushByTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		b, stop := start(t, s, opts(16, 100, 100*time.Millisecond))
		defer stop()
		b.Add(1)
		time.Sleep(99 * time.Millisecond)
		synctest.Wait()
		if got := s.sizes(); len(got) != 0 {
			t.Fatalf("written before the interval: %v", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := s.items(); !slices.Equal(got, []int{1}) {
			t.Fatalf("written %v after the interval, want [1]", got)
		}
	})
}

func TestCloseDrainsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		b, stop := start(t, s, opts(64, 4, time.Hour))
		want := make([]int, 0, 30)
		for i := range 30 {
			b.Add(i)
			want = append(want, i)
		}
		stop()
		if got := s.items(); !slices.Equal(got, want) {
			t.Fatalf("written %v, want %v", got, want)
		}
		for _, n := range s.sizes() {
			if n > 4 {
				t.Errorf("a batch of %d, over BatchSize", n)
			}
		}
		if b.Pending() != 0 {
			t.Errorf("Pending = %d after Run", b.Pending())
		}
		if b.Add(99) || s.dropped[Stopped] != 1 {
			t.Errorf("Add after Run: dropped %v, want one Stopped", s.dropped)
		}
		if err := b.Flush(t.Context()); err != nil {
			t.Errorf("Flush after Run: %v", err)
		}
	})
}

func TestFlushMakesPendingVisible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		b, stop := start(t, s, opts(16, 100, time.Hour))
		defer stop()
		b.Add(1)
		b.Add(2)
		if err := b.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := s.items(); !slices.Equal(got, []int{1, 2}) {
			t.Fatalf("written %v after Flush, want [1 2]", got)
		}
	})
}

func TestFlushWaitsForRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(opts(1, 1, time.Hour))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := b.Flush(ctx); err != context.DeadlineExceeded {
			t.Fatalf("Flush without Run = %v, want the deadline", err)
		}
	})
}

func TestFullQueue(t *testing.T) {
	for _, wait := range []time.Duration{0, 5 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			s := &sink{}
			o := opts(2, 2, time.Hour)
			o.EnqueueWait, o.Write, o.Drop = wait, s.write, s.drop
			b := New(o) // not running: nothing empties the queue
			if !b.Add(1) || !b.Add(2) {
				t.Fatal("Add refused with room in the queue")
			}
			t0 := time.Now()
			if b.Add(3) {
				t.Fatal("Add accepted into a full queue")
			}
			if d := time.Since(t0); d != wait {
				t.Errorf("Add into a full queue took %v, want %v", d, wait)
			}
			if s.dropped[Full] != 1 || b.Pending() != 2 {
				t.Errorf("dropped %v, pending %d; want one Full, 2 pending", s.dropped, b.Pending())
			}
		})
	}
}

func TestEnqueueWaitGetsRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		o := opts(1, 1, time.Hour)
		o.EnqueueWait, o.Write, o.Drop = time.Second, s.write, s.drop
		b := New(o)
		b.Add(1) // the queue is full
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); time.Sleep(time.Millisecond); b.Run(ctx) }()
		if !b.Add(2) {
			t.Error("Add dropped although Run made room within EnqueueWait")
		}
		cancel()
		<-done
		if got := s.items(); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("written %v, want [1 2]", got)
		}
	})
}

func TestUnwrittenAtTheEndIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		o := opts(16, 2, time.Hour)
		// A store that never answers: each write holds until its context ends.
		o.Write = func(ctx context.Context, b []int) []int { <-ctx.Done(); return b }
		b, stop := start(t, s, o)
		for i := range 5 {
			b.Add(i)
		}
		synctest.Wait()
		t0 := time.Now()
		stop()
		if d := time.Since(t0); d != time.Second {
			t.Errorf("final drain took %v, want FinalTimeout", d)
		}
		if s.dropped[Unwritten] != 5 || b.Pending() != 0 {
			t.Errorf("dropped %v, pending %d; want 5 Unwritten, 0 pending", s.dropped, b.Pending())
		}
	})
}

func TestDetachWritesLetsAWriteFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		o := opts(16, 1, time.Hour)
		o.DetachWrites = true
		o.Write = func(ctx context.Context, b []int) []int {
			time.Sleep(time.Millisecond)
			if ctx.Err() != nil {
				return b
			}
			return s.write(ctx, b)
		}
		b, stop := start(t, s, o)
		b.Add(1)
		synctest.Wait() // the write is under way
		stop()
		if got := s.items(); !slices.Equal(got, []int{1}) || s.dropped[Unwritten] != 0 {
			t.Fatalf("written %v, dropped %v; want the write under way to finish", got, s.dropped)
		}
	})
}

// TestFlushWritesWhatIsQueued flushes while the loop is busy writing, so
// that what Flush must write is still in the queue, not in hand.
func TestFlushWritesWhatIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		o := opts(64, 1, time.Hour)
		gate := make(chan struct{})
		// Each write takes a while, so that what a Flush leaves behind is
		// still unwritten when it returns.
		o.Write = func(ctx context.Context, b []int) []int {
			<-gate
			time.Sleep(time.Millisecond)
			return s.write(ctx, b)
		}
		b, stop := start(t, s, o)
		defer stop()
		want := []int{0}
		b.Add(0)
		synctest.Wait() // 0 is being written
		for i := 1; i <= 20; i++ {
			b.Add(i)
			want = append(want, i)
		}
		flushed := make(chan error)
		go func() { flushed <- b.Flush(t.Context()) }()
		synctest.Wait()
		close(gate)
		if err := <-flushed; err != nil {
			t.Fatal(err)
		}
		if got := s.items(); !slices.Equal(got, want) {
			t.Fatalf("written %v after Flush, want %v", got, want)
		}
	})
}
